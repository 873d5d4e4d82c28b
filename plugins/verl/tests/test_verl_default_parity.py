"""verl_default scores every sample as verl 0.9.1's own ``default_compute_score`` does.

Each branch's samples (``cases.py``: right, wrong, unformatted, odd LaTeX,
empty, huge, unicode) are scored by verl's function and by ours, and must get
the same result: the same float, or the same dict (math_dapo's ``score``,
``acc`` and ``pred``). verl runs in this process, except its code scorer,
which forks and runs programs: that one runs in a child process with a
deadline, beside ours.
"""

from __future__ import annotations

import concurrent.futures
from types import ModuleType
from typing import Any

import pytest
from verl.utils.reward_score import default_compute_score, prime_math
from verl_rewards_verl.default import compute_score

IN_PROCESS_BRANCHES = ["gsm8k", "math", "math_dapo", "prime_math", "geo3k", "search_r1"]


def ours(case: Any) -> Any:
    try:
        return compute_score(case.data_source, case.solution_str, case.ground_truth)
    except Exception as e:  # noqa: BLE001 - a raised error is a result to compare
        return f"raised {type(e).__name__}"


def theirs(case: Any) -> Any:
    try:
        return default_compute_score(case.data_source, case.solution_str, case.ground_truth)
    except Exception as e:  # noqa: BLE001 - a raised error is a result to compare
        return f"raised {type(e).__name__}"


@pytest.fixture
def verl_sympy_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """verl's are_equal_under_sympy without its fork-per-call timeout wrapper (its own body,
    ``__wrapped__``): the same verdicts on samples that finish, in a fraction of the time."""
    monkeypatch.setattr(prime_math, "are_equal_under_sympy", prime_math.are_equal_under_sympy.__wrapped__)


def mismatches(samples: list[Any], got: list[Any], want: list[Any]) -> list[tuple[str, Any, Any, Any]]:
    return [(c.solution_str[:120], c.ground_truth, a, b) for c, a, b in zip(samples, got, want)
            if a != b or type(a) is not type(b)]


@pytest.mark.usefixtures("verl_sympy_in_process")
@pytest.mark.parametrize("branch", IN_PROCESS_BRANCHES)
def test_each_sample_scores_as_in_verl(cases: ModuleType, branch: str) -> None:
    samples = cases.BRANCHES[branch]()
    want = [theirs(c) for c in samples]
    got = [ours(c) for c in samples]
    assert mismatches(samples, got, want) == []
    scores = {w["score"] if isinstance(w, dict) else w for w in want}
    assert len(scores) >= 2, f"{branch}: the samples should both pass and fail, got {scores}"


def test_math_dapo_returns_verls_dict_with_its_extra_keys(cases: ModuleType) -> None:
    case = cases.dapo_cases()[0]
    assert ours(case) == theirs(case) == {"score": 1.0, "acc": True, "pred": "42"}


def test_verls_forked_sympy_step_gives_the_verdicts_of_its_in_process_body(cases: ModuleType) -> None:
    """The fixture above is sound: through verl's real fork-and-timeout wrapper, the same."""
    samples = [c for c in cases.prime_cases() if "sqrt" in c.ground_truth or "(x+1)" in c.ground_truth][:4]
    assert [theirs(c) for c in samples] == [ours(c) for c in samples] == [1.0, 1.0, 0.0, 1.0]


def ours_beside_verls_prime_code(samples: list[Any], peers: ModuleType) -> tuple[list[Any], Any]:
    """Our scores, and verl's prime_code scores computed meanwhile in its bounded child process."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        verl = pool.submit(peers.verl_scores, samples, 60.0, ["prime_code"])
        got = [ours(c) for c in samples]
        return got, verl.result()


def test_code_scores_equal_verls_prime_code_on_stdin_problems(cases: ModuleType, peers: ModuleType) -> None:
    samples = cases.code_cases()
    got, want = ours_beside_verls_prime_code(samples, peers)
    assert want != peers.TIMED_OUT
    assert mismatches(samples, got, want) == []
    assert sorted(set(want)) == [0.0, 2 / 3, 1.0]


def test_call_based_code_scores_equal_verls_prime_code(cases: ModuleType, peers: ModuleType) -> None:
    samples = cases.call_based_cases()
    got, want = ours_beside_verls_prime_code(samples, peers)
    assert want == [1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    assert mismatches(samples, got, want) == []
