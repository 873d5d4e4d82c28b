"""verl 0.9.1's own ``search_r1_like_qa_em`` module, the peer qa_em matches.

Shared by the tests (the ``verl_qa_em`` fixture in conftest.py) and
benchmarks/bench_qa.py.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def verl_qa_em() -> ModuleType:
    """verl's ``search_r1_like_qa_em``, loaded from its installed file (verl is a test dependency).

    The module imports only ``random``, ``re`` and ``string``, while importing
    it through the ``verl`` package pulls in torch and the rest of verl (~10 s).
    """
    spec = importlib.util.find_spec("verl")
    assert spec is not None and spec.origin is not None, "verl is a test dependency (scripts/install.sh --test)"
    path = Path(spec.origin).parent / "utils" / "reward_score" / "search_r1_like_qa_em.py"
    module_spec = importlib.util.spec_from_file_location("verl_search_r1_like_qa_em", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module
