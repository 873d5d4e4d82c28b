"""Fixtures shared by the math plugin's tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).parent


def load_sibling(name: str) -> ModuleType:
    """Import ``tests/<name>.py`` by path (the tests run with ``--import-mode=importlib``)."""
    spec = importlib.util.spec_from_file_location(f"verl_rewards_math_tests_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def peer() -> ModuleType:
    """``peer_cases.py``: the peer answer-equivalence cases and how math_boxed is run on them."""
    return load_sibling("peer_cases")


@pytest.fixture(scope="session")
def gsm8k_rows() -> list:
    """The 2048-response comparison batch of ``gsm8k_batch.py``."""
    return list(load_sibling("gsm8k_batch").gsm8k_batch(2048, seed=0))
