"""The peer answer-equivalence cases (``data/peer_cases.jsonl``) and how ``math_boxed`` is run on them.

Each case is a (gold, prediction, expected verdict) taken from another
project's test suite, with that suite's repository and path. The prediction
is the response; one without a box is boxed whole (``\\boxed{pred}``), since
``math_boxed`` reads the box. Used by ``test_math_peer_cases.py`` and
``benchmarks/bench_math.py``; run as a script it prints one verdict per line
(for the fresh-process determinism test).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

CASES_FILE = Path(__file__).parent / "data" / "peer_cases.jsonl"


def load_cases() -> list[dict[str, Any]]:
    """Every case, in file order."""
    with open(CASES_FILE, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def as_response(pred: str) -> str:
    """The prediction as a response ``math_boxed`` reads: boxed whole when it has no box."""
    return pred if ("\\boxed" in pred or "\\fbox" in pred) else f"\\boxed{{{pred}}}"


def held_out(case: dict[str, Any]) -> bool:
    """Whether ``case`` is in the held-out fifth (a fixed hash of its source and answers):
    measured, never tuned on."""
    key = json.dumps([case["source"], case["gold"], case["pred"]])
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % 5 == 0


def source_repo(case: dict[str, Any]) -> str:
    """The repository a case comes from (``huggingface/Math-Verify``)."""
    return str(case["source"]).split(" ", 1)[0]


def math_boxed_verdicts(cases: list[dict[str, Any]]) -> list[bool]:
    """``math_boxed``'s verdict (``acc``) on every case, with each case's convention kwargs."""
    from verl_rewards_math.math_boxed import compute_score

    return [
        bool(compute_score("peer", as_response(c["pred"]), c["gold"], **c.get("kwargs", {}))["acc"])
        for c in cases
    ]


if __name__ == "__main__":
    for verdict in math_boxed_verdicts(load_cases()):
        print(int(verdict))
    sys.exit(0)
