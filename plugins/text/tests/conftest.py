"""Fixtures shared by the text plugin's tests."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import ModuleType

import pytest

# verl_peer.py is shared with benchmarks/bench_qa.py (the tests run with
# --import-mode=importlib: it is loaded by path).
VERL_PEER = runpy.run_path(str(Path(__file__).with_name("verl_peer.py")))


@pytest.fixture(scope="session")
def verl_qa_em() -> ModuleType:
    """verl 0.9.1's own ``search_r1_like_qa_em`` module (see verl_peer.py)."""
    module: ModuleType = VERL_PEER["verl_qa_em"]()
    return module
