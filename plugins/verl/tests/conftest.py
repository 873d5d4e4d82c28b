"""Fixtures shared by the verl plugin's tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).parent


def load_sibling(name: str) -> ModuleType:
    """Import ``tests/<name>.py`` by path (the tests run with ``--import-mode=importlib``)."""
    spec = importlib.util.spec_from_file_location(f"verl_rewards_verl_tests_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def cases() -> ModuleType:
    """``cases.py``: the samples of each branch."""
    return load_sibling("cases")


@pytest.fixture(scope="session")
def peers() -> ModuleType:
    """``peers.py``: verl's own scorers, run in-process or in a bounded child process."""
    return load_sibling("peers")


@pytest.fixture(scope="session")
def report() -> ModuleType:
    """``verified_report.py``: what ``math="verified"`` changes against ``math="verl"``, and why."""
    return load_sibling("verified_report")
