"""Fixtures shared by the ifeval plugin's tests."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

# every_instruction.py is shared with benchmarks/bench_ifeval.py (the tests run with
# --import-mode=importlib: it is loaded by path).
HERE = Path(__file__).parent
EVERY_INSTRUCTION: dict[str, dict[str, object]] = runpy.run_path(str(HERE / "every_instruction.py"))["ROW"]


@pytest.fixture(scope="session")
def ifeval_kwargs() -> dict[str, dict[str, object]]:
    """A valid kwargs mapping for each of the 25 instruction types."""
    return EVERY_INSTRUCTION
