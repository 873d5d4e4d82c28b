"""The docs' Python snippets run as written, and print what their comments say.

Every ```python block of README.md and docs/ is either run by a test here or
listed in NOT_RUN with the reason, so a new or edited snippet cannot go
unchecked. A ``print(...)  # claim`` line is checked: the printed line starts
with the claim (a trailing ``...`` or ``.`` is dropped). Module snippets that
the docs install as a plugin (``# my_rewards/exact.py`` plus the entry points
of the doc's pyproject block) become a real installed distribution.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.checking import check_named

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.docs

# (doc, block index) -> (its first line, why it is not run). Keep the reasons honest.
NOT_RUN = {
    ("docs/composition.md", 1): ("from verl_rewards.token_rewards import score_responses, token_level_rewards",
                                 "a fragment: needs a verl batch (tokenizer, response ids and mask)"),
    ("docs/integrations/trl.md", 0): ("from datasets import load_dataset",
                                      "downloads a dataset and a model, then trains"),
    ("docs/integrations/trl.md", 3): ("import os",
                                      "needs a running serve --tasks and downloads a model; "
                                      "tests/integration/test_serve_ors.py trains GRPOTrainer with the "
                                      "same OpenRewardSpec calls on a model built in code"),
    ("docs/serve.md", 1): ("import os",
                           "needs a running serve --tasks and downloads a model; "
                           "tests/integration/test_serve_ors.py trains GRPOTrainer with the "
                           "same OpenRewardSpec calls on a model built in code"),
    ("docs/model-rewards.md", 1): ("from verl_rewards import Scorer",
                                   "needs a judge server or a reward model checkpoint"),
    ("docs/integrations/areal.md", 0): ("import asyncio",
                                        "run by tests/integration/test_integrations_areal.py::"
                                        "test_the_docs_example_prints_what_it_says"),
    ("docs/integrations/skyrl.md", 0): ("import skyrl_gym",
                                        "run by tests/integration/test_integrations_skyrl.py::"
                                        "test_the_docs_example_prints_what_it_says"),
    ("docs/integrations/slime.md", 0): ("import asyncio",
                                        "run by tests/integration/test_integrations_slime.py::"
                                        "test_the_docs_example_prints_what_it_says"),
    ("docs/integrations/verifiers.md", 0): ("import asyncio",
                                            "run by tests/integration/test_integrations_verifiers.py::"
                                            "test_the_docs_example_prints_what_it_says"),
    ("docs/integrations/verifiers.md", 1): ("config = vf.TaskConfig(rewards={",
                                            "a fragment of a verifiers task config (import-string form); "
                                            "test_integrations_verifiers.py runs score by import string"),
    ("docs/skip.md", 0): ('reward_func("gsm8k", ground_truth_column="answer", on_error="skip")',
                          "a fragment: test_integrations_trl_skip.py runs it in TRL's GRPOTrainer"),
    ("docs/writing-a-plugin.md", 5): ("from verl_rewards.testing.conformance import assert_conformant",
                                      "runs every installed host: tests/integration/test_conformance.py "
                                      "does it for the first-party plugins"),
    ("docs/serve.md", 0): ("from verl_rewards import RemoteScorer",
                           "needs a running service: tests/integration/test_serve.py runs RemoteScorer "
                           "against a real `verl-rewards serve`"),
    ("docs/writing-a-plugin.md", 4): (
        '@reward(kind="math", description="1 when the reference appears anywhere in the response.",',
        "the installed test plugin `gameable` (tests/fixtures/audit_targets) is this function; "
        "tests/unit/test_cli_audit.py checks the audit output shown under it"),
}

# (doc, block index) -> its first line: the blocks the tests below run.
RUN = {
    ("README.md", 0): "# my_rewards/exact.py",
    ("README.md", 1): "from verl_rewards import Scorer",
    ("docs/cli.md", 0): "def test_my_reward_passes_check(verl_reward_check):",
    ("docs/composition.md", 0): "from verl_rewards import Scorer",
    ("docs/integrations/trl.md", 1): "from verl_rewards.integrations.trl import reward_func",
    ("docs/integrations/trl.md", 2): "reward_func(reward={",
    ("docs/integrations/verl.md", 0): "from verl_rewards.integrations.verl import reference",
    ("docs/model-rewards.md", 0): "def compute_score(data_source, solution_str, ground_truth, "
                                  "extra_info=None, prompt=None):",
    ("docs/model-rewards.md", 2): "from verl_rewards import reward",
    ("docs/writing-a-plugin.md", 0): "# my_rewards/exact.py",
    ("docs/writing-a-plugin.md", 1): "class Judge:",
    ("docs/writing-a-plugin.md", 2): "# my_rewards/budget.py",
    ("docs/writing-a-plugin.md", 3): "from verl_rewards import Scorer",
}


@pytest.fixture(autouse=True)
def _forget_doc_packages() -> Iterator[None]:
    """Each test installs its own ``my_rewards``: never import another test's."""
    yield
    for name in [m for m in sys.modules if m.split(".")[0] == "my_rewards"]:
        del sys.modules[name]


def _blocks(doc: str, language: str = "python") -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (ROOT / doc).read_text(), flags=re.S)


def _block(doc: str, index: int) -> str:
    block = _blocks(doc)[index]
    assert block.splitlines()[0] == RUN[(doc, index)], f"{doc} block {index} moved: update RUN"
    return block


def _every_block() -> Iterator[tuple[str, int, str]]:
    docs = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))]
    for doc in docs:
        for index, block in enumerate(_blocks(doc)):
            yield doc, index, block


def _run(block: str, name: str, namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    """Execute ``block``; check each ``print(...)  # claim`` against what it printed."""
    printed: list[str] = []

    def record(*args: object, sep: str = " ", **_: object) -> None:
        printed.append(sep.join(str(a) for a in args))

    namespace = {"print": record, **(namespace or {})}
    exec(compile(block, name, "exec"), namespace)
    calls = re.findall(r"^print\(.*?\)\s*(?:#\s*(.*))?$", block, flags=re.M)
    assert len(printed) == len(calls), (printed, calls)
    for line, claim in zip(printed, calls):
        if claim:
            expected = claim.strip().rstrip(".").removesuffix("...").strip()
            assert line.startswith(expected), (line, claim)
    return namespace


def _entry_points(doc: str) -> str:
    """The ``[project.entry-points.verl_rewards]`` table of the doc's pyproject block."""
    [pyproject] = [b for b in _blocks(doc, "toml") if "[project.entry-points.verl_rewards]" in b]
    table = pyproject.split("[project.entry-points.verl_rewards]\n", 1)[1].split("\n[", 1)[0]
    pairs = re.findall(r'^(\w+)\s*=\s*"([^"]+)"$', table, flags=re.M)
    assert pairs, pyproject
    return "[verl_rewards]\n" + "".join(f"{name} = {target}\n" for name, target in pairs)


def test_every_python_block_is_run_or_says_why_not():
    found = {(doc, index): block.splitlines()[0] for doc, index, block in _every_block()}
    listed = {**RUN, **{key: first for key, (first, _) in NOT_RUN.items()}}
    assert found == listed


@pytest.mark.parametrize(("doc", "index", "block"), list(_every_block()))
def test_every_python_block_is_valid_python(doc, index, block):
    ast.parse(block, f"{doc}[{index}]")


def test_readme_plugin_in_ten_lines_installs_and_passes_check(make_dist):
    make_dist("my-rewards", "0.1.0", _entry_points("README.md"),
              {"my_rewards/__init__.py": "", "my_rewards/exact.py": _block("README.md", 0)})
    report = check_named("my-rewards:exact")
    assert report.ok and report.examples_run == 1, report.format()


@pytest.mark.ray
def test_readme_scoring_from_python_runs_on_ray(ray_session):
    namespace = _run(_block("README.md", 1), "README.md[1]")  # it defines its own samples
    assert namespace["result"].scores == [1.0, 0.0]


def test_writing_a_plugin_package_installs_and_scores_as_documented(make_dist):
    doc = "docs/writing-a-plugin.md"
    make_dist("my-rewards", "0.1.0", _entry_points(doc),
              {"my_rewards/__init__.py": "", "my_rewards/exact.py": _block(doc, 0),
               "my_rewards/judge.py": _block(doc, 1)})
    assert check_named("my-rewards:exact").ok
    _run(_block(doc, 3), f"{doc}[3]")


def test_writing_a_plugin_budget_reward_sees_the_configured_time_left(make_dist):
    from verl_rewards import Scorer

    doc = "docs/writing-a-plugin.md"
    make_dist("my-rewards", "0.1.0", {"budget": "my_rewards.budget:compute_score"},
              {"my_rewards/__init__.py": "", "my_rewards/budget.py": _block(doc, 2)})
    with Scorer.from_config({"plugin": "budget", "executor": "local", "timeout_s": 3}) as scorer:
        result = scorer.score([{"data_source": "d", "solution_str": "7", "ground_truth": "7"}])
    assert result.scores == [1.0]
    assert 2.3 < result.extra_info["budget_s"][0] <= 2.5


def test_writing_a_plugin_class_reward_defines_without_building(make_dist):
    namespace = _run(_block("docs/writing-a-plugin.md", 1), "writing-a-plugin.md[1]")
    assert callable(namespace["Judge"])  # make_client is the reader's: called only when built


def test_composition_routing_example():
    _run(_block("docs/composition.md", 0), "composition.md[0]")


def test_cli_pytest_fixture_example(make_dist):
    make_dist("my-dist", "1.0", {"my_reward": "my_rewards.exact:compute_score"},
              {"my_rewards/__init__.py": "", "my_rewards/exact.py": _block("README.md", 0)})
    namespace = _run(_block("docs/cli.md", 0), "cli.md[0]")  # runs assert_plugin_ok("my-dist:my_reward")
    from verl_rewards.pytest_plugin import assert_plugin_ok

    namespace["test_my_reward_passes_check"](assert_plugin_ok)


def test_trl_reward_function_scores_offline_as_grpo_trainer_calls_it():
    namespace = _run(_block("docs/integrations/trl.md", 1), "trl.md[1]")  # checks the printed scores
    assert namespace["scores"] == [1.0, 0.0]


def test_trl_composite_reward_function_builds():
    from verl_rewards.integrations.trl import reward_func

    namespace: dict[str, Any] = {"reward_func": reward_func}
    _run(_block("docs/integrations/trl.md", 2), "trl.md[2]", namespace)


def test_verl_pre_launch_check_accepts_the_documented_config():
    _run(_block("docs/integrations/verl.md", 0), "verl.md[0]")


def test_model_rewards_signatures_define():
    _run(_block("docs/model-rewards.md", 0), "model-rewards.md[0]")
    namespace = _run(_block("docs/model-rewards.md", 2), "model-rewards.md[2]")
    assert namespace["MyRewardModel"].__verl_reward__.max_batch_size == 32
