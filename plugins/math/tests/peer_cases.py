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
# Math-Verify's cases whose prediction (or gold) is text to pick the answer out of.
EXTRACTION_FILE = Path(__file__).parent / "data" / "peer_extraction_cases.jsonl"


def load_cases(path: Path = CASES_FILE) -> list[dict[str, Any]]:
    """Every case, in file order."""
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def load_all_cases() -> list[dict[str, Any]]:
    """The answer pairs and the extraction cases: every case the peers' suites hold."""
    return load_cases() + load_cases(EXTRACTION_FILE)


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


def math_boxed_verdicts(cases: list[dict[str, Any]], extract: str = "boxed") -> list[bool]:
    """``math_boxed``'s verdict (``acc``) on every case, with each case's convention kwargs.

    ``boxed``: the prediction boxed whole when it has no box (the box is what this mode
    reads); ``last_math``: the prediction as written, the answer found by extraction.
    """
    from verl_rewards_math.math_boxed import compute_score

    def response(pred: str) -> str:
        return as_response(pred) if extract == "boxed" else pred

    return [
        bool(compute_score("peer", response(c["pred"]), c["gold"], extract=extract, **c.get("kwargs", {}))["acc"])
        for c in cases
    ]


if __name__ == "__main__":
    # argument: the extract mode (default boxed, on the answer pairs; last_math: on every case)
    mode = sys.argv[1] if len(sys.argv) > 1 else "boxed"
    for verdict in math_boxed_verdicts(load_cases() if mode == "boxed" else load_all_cases(), mode):
        print(int(verdict))
    sys.exit(0)
