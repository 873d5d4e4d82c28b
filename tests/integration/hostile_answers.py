"""Hostile answers for every first-party plugin: megabytes of each plugin's own syntax.

Shared by ``test_hostile_answers.py`` (the rule: each is scored, status ``ok``, a wrong
answer's score, within the reward's time limit, on the local executor) and
``benchmarks/bench_hostile_answers.py`` (how long each takes). A shape is about a
megabyte (the policy writes it); each plugin places it where it reads the answer
(bare, in a box, in an answer block, after ``####``) as well as bare.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

MB = 1 << 20


def _fill(unit: str, size: int = MB) -> str:
    """``unit`` repeated to about ``size`` characters."""
    return unit * max(1, size // len(unit))


def _nested(opener: str, inner: str, closer: str, size: int = MB) -> str:
    depth = max(1, size // (len(opener) + len(closer)))
    return opener * depth + inner + closer * depth


# name -> text; each costs a linear scan nothing, and broke (or could break) a quadratic one.
SHAPES: Mapping[str, str] = MappingProxyType({
    "prose": _fill("The answer follows from the steps above. "),
    "no space": "x" * MB,
    "digits": "9" * MB,
    "'. ' (a sentence boundary every 2 chars)": _fill(". "),
    "'! '": _fill("! "),
    "'e.g. ' (abbreviations)": _fill("e.g. "),
    "'A. ' (initials)": _fill("A. "),
    "newlines": "\n" * MB,
    "'*'": "*" * MB,
    "unclosed \\boxed{": _fill("\\boxed{"),
    "nested \\boxed{...}": _nested("\\boxed{", "1", "}"),
    "many \\boxed{1}": _fill("\\boxed{1} "),
    "\\boxed{ then open braces": "\\boxed{" + "{" * MB,
    "nested \\frac{": _nested("\\frac{", "1}{2", "}"),
    "nested ^{": _nested("9^{", "9", "}"),
    "deep parentheses": _nested("(", "1", ")"),
    "deep brackets": _nested("[", "1", "]"),
    "unclosed <answer>": _fill("<answer>"),
    "many <answer>1</answer>": _fill("<answer>1</answer>"),
    "<think> tags": _fill("<think></think>"),
    "#### markers": _fill("#### "),
    "'#### 1,' (thousands)": _fill("#### 1,"),
    "'1,' (thousands)": _fill("1,"),
    "'1.' (decimals)": _fill("1."),
    "'$' (math delimiters)": "$" * MB,
    "'$1$ '": _fill("$1$ "),
    "backslashes": "\\" * MB,
    "'answer is ' (markers)": _fill("The answer is "),
    "'Answer: '": _fill("Answer: "),
    "'Step 1: '": _fill("Step 1: "),
    "unicode: minus, fullwidth and Arabic-Indic digits": _fill("\u2212\uff19\u0669 "),
    "unicode: combining marks, RTL, emoji, NUL": _fill("a\u0301\u202e\U0001f600\x00\ufffd "),
    "code fences": _fill("```python\n"),
    "JSON nesting": _nested("{\"a\": ", "1", "}"),
    "9**9**9**9": "9**9**9**9",
    "\\boxed{9^{9^{9^{9}}}}": "\\boxed{9^{9^{9^{9}}}}",
    "factorial(10**9)": "factorial(10**9)",
    "1e999999999": "1e999999999",
})


class Case(NamedTuple):
    """A plugin configuration and where its answer goes.

    ``wrap`` puts a shape where the plugin reads the answer (scored bare too);
    ``wrong`` is the score every shape must get (None: any score; a shaping reward's
    value depends on the length); ``warm`` is a right answer, scored first (and
    before each shape in the benchmark) so a child's start is not what is measured.
    """

    plugin: str
    sample: Callable[[str], dict[str, Any]]
    wrap: Callable[[str], str] | None = None
    wrong: float | None = 0.0
    kwargs: Mapping[str, Any] = MappingProxyType({})
    warm: str = ""

    def samples(self) -> list[tuple[str, dict[str, Any]]]:
        """(label, sample) for every shape, bare and (when the plugin has a place) wrapped."""
        out = [(name, self.sample(text)) for name, text in SHAPES.items()]
        if self.wrap is not None:
            out += [(f"{name}, in place", self.sample(self.wrap(text))) for name, text in SHAPES.items()]
        return out


def _row(source: str, truth: Any, extra: Any = None) -> Callable[[str], dict[str, Any]]:
    def sample(text: str) -> dict[str, Any]:
        return {"data_source": source, "solution_str": text, "ground_truth": truth, "extra_info": extra}
    return sample


def _boxed(text: str) -> str:
    return f"So the answer is $\\boxed{{{text}}}$."


def _answer(text: str) -> str:
    return f"<think>Work.</think><answer>{text}</answer>"


# Every one of IFEval's 25 instruction types (plugins/ifeval/tests/every_instruction.py).
IFEVAL_ROW: Mapping[str, Any] = MappingProxyType({
    "instruction_id_list": [
        "keywords:existence", "keywords:frequency", "keywords:forbidden_words", "keywords:letter_frequency",
        "language:response_language", "length_constraints:number_sentences",
        "length_constraints:number_paragraphs", "length_constraints:number_words",
        "length_constraints:nth_paragraph_first_word", "detectable_content:number_placeholders",
        "detectable_content:postscript", "detectable_format:number_bullet_lists",
        "detectable_format:constrained_response", "detectable_format:number_highlighted_sections",
        "detectable_format:multiple_sections", "detectable_format:json_format", "detectable_format:title",
        "combination:two_responses", "combination:repeat_prompt", "startend:end_checker",
        "change_case:capital_word_frequency", "change_case:english_capital", "change_case:english_lowercase",
        "punctuation:no_comma", "startend:quotation",
    ],
    "kwargs": [
        {"keywords": ["river", "bridge"]}, {"keyword": "city", "frequency": 3, "relation": "at least"},
        {"forbidden_words": ["ugly"]}, {"letter": "z", "let_frequency": 5, "let_relation": "less than"},
        {"language": "en"}, {"num_sentences": 40, "relation": "less than"}, {"num_paragraphs": 4},
        {"num_words": 200, "relation": "at least"},
        {"num_paragraphs": 4, "nth_paragraph": 2, "first_word": "the"}, {"num_placeholders": 2},
        {"postscript_marker": "P.S."}, {"num_bullets": 3}, {}, {"num_highlights": 2},
        {"section_spliter": "Section", "num_sections": 2}, {}, {}, {}, {"prompt_to_repeat": "Describe a city."},
        {"end_phrase": "Any other questions?"}, {"capital_frequency": 10, "capital_relation": "less than"},
        {}, {}, {}, {},
    ],
})
_TWO_TESTS = json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"]})
_QA = '["Paris", "City of Paris"]'
_GSM8K = "#### 72"


def reasoning_gym_entry(task: str) -> dict[str, Any]:
    """The first entry reasoning-gym generates for ``task`` (seed 1)."""
    from reasoning_gym.factory import create_dataset

    return dict(create_dataset(task, seed=1, size=1)[0])


def _gym(task: str) -> Callable[[str], dict[str, Any]]:
    def sample(text: str) -> dict[str, Any]:
        entry = reasoning_gym_entry(task)
        return {"data_source": f"reasoning_gym/{task}", "solution_str": text, "ground_truth": entry["answer"],
                "extra_info": {"entry": entry}}
    return sample


# Tasks whose scorers compute on the answer: SymPy (countdown, puzzle24, simple_integration,
# polynomial_multiplication), Fraction (coin_flip), numbers (basic_arithmetic, decimal_arithmetic),
# grids (maze, sudoku), word lists (word_ladder); leg_counting keeps reasoning-gym's default.
GYM_TASKS = ("countdown", "puzzle24", "simple_integration", "polynomial_multiplication", "coin_flip",
             "basic_arithmetic", "decimal_arithmetic", "maze", "sudoku", "word_ladder", "leg_counting")

CASES: Mapping[str, Case] = MappingProxyType({
    "gsm8k": Case("gsm8k", _row("openai/gsm8k", "72"), lambda t: f"{t}\n#### {t}", warm=_GSM8K),
    "gsm8k lenient": Case("gsm8k", _row("openai/gsm8k", "72"), lambda t: f"#### {t}",
                          kwargs={"method": "lenient"}, warm=_GSM8K),
    "gsm8k flexible": Case("gsm8k", _row("openai/gsm8k", "72"), lambda t: f"{t} 71",
                           kwargs={"method": "flexible"}, warm="72"),
    "math_boxed": Case("math_boxed", _row("lighteval/MATH", "\\frac{1}{2}"), _boxed, warm="\\boxed{\\frac12}"),
    "math_boxed last_math": Case("math_boxed", _row("lighteval/MATH", "\\frac{1}{2}"), _boxed,
                                 kwargs={"extract": "last_math"}, warm="The answer is $\\frac12$."),
    "think_answer_format": Case("think_answer_format", _row("x", ""), _answer),
    "tag_count": Case("tag_count", _row("x", ""), _answer, wrong=None),
    "reasoning_steps": Case("reasoning_steps", _row("x", ""), wrong=None),
    "repetition_penalty": Case("repetition_penalty", _row("x", ""), wrong=None),
    "length_penalty": Case("length_penalty", _row("x", "", {"response_length": 10}), wrong=None),
    "overlong_penalty": Case("overlong_penalty", _row("x", ""), wrong=None,
                             kwargs={"max_length": 1000, "buffer_length": 200}),
    "cosine_length": Case("cosine_length", _row("x", "\\frac{63}{400}"), _boxed, wrong=None,
                          warm="\\boxed{\\frac{63}{400}}"),
    "code_exec": Case("code_exec", _row("apps", _TWO_TESTS),
                      lambda t: f"```python\n{t}\n```", warm="```python\nprint(sum(map(int, input().split())))\n```"),
    "ifeval strict": Case("ifeval", _row("ifeval", dict(IFEVAL_ROW))),  # a dict: the process executor pickles it
    "ifeval loose, partial": Case("ifeval", _row("ifeval", dict(IFEVAL_ROW)), kwargs={"mode": "loose", "partial": True},
                                  wrong=None),
    "qa_em": Case("qa_em", _row("searchR1_nq", _QA), _answer, warm="<answer>Paris</answer>"),
    "qa_f1": Case("qa_f1", _row("searchR1_nq", _QA), _answer, wrong=None, warm="<answer>Paris</answer>"),
    **{f"verl_default {source}": Case("verl_default", _row(source, truth), wrap, wrong=wrong, warm=warm)
       for source, truth, wrap, wrong, warm in (
           ("openai/gsm8k", "72", lambda t: f"{t}\n#### {t}", 0.0, _GSM8K),
           ("lighteval/MATH", "\\frac{1}{2}", _boxed, 0.0, "\\boxed{\\frac{1}{2}}"),
           ("math_dapo", "204", lambda t: f"Answer: {t}", -1.0, "Answer: 204"),
           ("aime2024", "204", _boxed, -1.0, "\\boxed{204}"),
           ("numina_olympiads", "\\frac{1}{2}", _boxed, 0.0, "\\boxed{\\frac{1}{2}}"),
           # without <think>: geometry3k's 0.1 for the format would be the wrong answer's score
           ("hiyouga/geometry3k", "30", _boxed, 0.0, "<think>t</think> \\boxed{30}"),
           ("searchR1_nq", {"target": ["Paris"]}, _answer, 0.0, "<answer>Paris</answer>"),
           ("apps", _TWO_TESTS, lambda t: f"```python\n{t}\n```", 0.0,
            "```python\nprint(sum(map(int, input().split())))\n```"),
       )},
    **{f"verl_default verified {source}": Case("verl_default", _row(source, truth), _boxed, wrong=wrong,
                                               kwargs={"math": "verified"}, warm="\\boxed{\\frac{1}{2}}")
       for source, truth, wrong in (("lighteval/MATH", "\\frac{1}{2}", 0.0), ("math_dapo", "\\frac{1}{2}", -1.0),
                                    ("numina_olympiads", "\\frac{1}{2}", 0.0))},
    **{f"reasoning_gym {task}": Case("reasoning_gym", _gym(task), _answer, warm="<answer>0</answer>")
       for task in GYM_TASKS},
    "llm_judge": Case("llm_judge", _row("chat", "")),
    "hf_reward_model": Case("hf_reward_model", lambda t: {**_row("chat", "")(t), "prompt": "2+2?"}, wrong=0.0,
                            kwargs={"model_path": "verl-rewards-models:self-test"}),
})


@contextlib.contextmanager
def reward_config(case: Case, timeout_s: float) -> Iterator[dict[str, Any]]:
    """The reward section scoring ``case`` on the local executor (for ``llm_judge``, with a
    chat server on 127.0.0.1 running meanwhile, which scores every response 0)."""
    config = {"plugin": case.plugin, "kwargs": dict(case.kwargs), "timeout_s": timeout_s, "executor": "local"}
    if case.plugin != "llm_judge":
        yield config
        return
    from verl_rewards_models.testing import ChatServer

    with ChatServer() as server:
        config["kwargs"].update(base_url=server.base_url, model="judge", template="{response} score=0")
        yield config
