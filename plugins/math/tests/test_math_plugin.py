"""The distribution's contract: its entry points resolve to decorated sample
functions, and every declared self-test example holds."""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.metadata import Example, metadata_of

tomllib = pytest.importorskip("tomllib")

DISTRIBUTION = "verl-rewards-math"
NAMES = ["gsm8k", "math_boxed"]
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
SAMPLE_PARAMETERS = ["data_source", "solution_str", "ground_truth", "extra_info"]


def declared() -> dict[str, str]:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    return dict(project["entry-points"]["verl_rewards"])


def load(name: str) -> Callable[..., Any]:
    module, _, attr = declared()[name].partition(":")
    return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


def all_examples() -> list[tuple[str, int, Example]]:
    return [(name, i, ex) for name in NAMES for i, ex in enumerate(metadata_of(load(name)).examples)]


def test_pyproject_declares_exactly_the_contract_names() -> None:
    assert sorted(declared()) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_entry_point_is_a_decorated_sample_function(name: str) -> None:
    target = load(name)
    assert list(inspect.signature(target).parameters)[:4] == SAMPLE_PARAMETERS
    meta = metadata_of(target)
    assert meta.description
    assert 3 <= len(meta.examples) <= 6


@pytest.mark.parametrize(("name", "index", "example"), all_examples())
def test_self_test_example_holds(name: str, index: int, example: Example) -> None:
    result = load(name)(
        example.data_source, example.solution_str, example.ground_truth, example.extra_info, **example.kwargs
    )
    score = result["score"] if isinstance(result, dict) else result
    assert score == pytest.approx(example.expected, abs=example.tolerance)
    if isinstance(result, dict):
        assert all(isinstance(v, (int, float, str, bool)) for v in result.values())


def test_installed_metadata_matches_pyproject() -> None:
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{DISTRIBUTION} is not installed")
    installed = {ep.name: ep.value for ep in dist.entry_points if ep.group == "verl_rewards"}
    assert installed == declared()
