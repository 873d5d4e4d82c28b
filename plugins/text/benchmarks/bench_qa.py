"""qa_em against verl's search_r1_like_qa_em on the same samples: time per sample, and hostile input.

    python plugins/text/benchmarks/bench_qa.py [--rounds N]

The samples: 9 answers in each of 5 wrappers and in a search-R1-like response of
~1.5 kB, each against 5 targets (270). verl's function is
loaded from its installed file (verl 0.9.1). verl's prints (1 call in 64) go
to /dev/null for both sides. Then one hostile response, unclosed answer tags,
for both at growing sizes (verl's regex only up to 32 kB: it is quadratic).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import sys
import time
from pathlib import Path
from typing import Any

from verl_rewards_text.qa_em import compute_score
from verl_rewards_text.qa_f1 import compute_score as f1_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from verl_peer import verl_qa_em

ANSWERS = ["Paris", "paris.", "The Paris", " PARIS ", "Lyon", "", "Paris, France", "an apple", "U.S."]
WRAPPERS = ["<answer>{}</answer>", "<think>Let me think.</think>\n<answer>{}</answer>", "{}",
            "<answer>Lyon</answer> no, <answer>{}</answer>", "<answer>{}</answer>" + "</answer>" * 10]
TARGETS: list[Any] = [["Paris"], "Paris", ["the paris"], ["Lyon", "Paris"], ["an apple", "apple"]]
SEARCH = ("<think>I need to find where the Eiffel Tower is.</think>\n<search>Eiffel Tower location</search>\n"
          "<information>" + "The Eiffel Tower is a wrought-iron lattice tower in Paris. " * 20 +
          "</information>\n<think>So it is in Paris.</think>\n<answer>{}</answer>")


def samples() -> list[tuple[str, dict[str, Any]]]:
    responses = [w.format(a) for w, a in itertools.product(WRAPPERS, ANSWERS)]
    responses += [SEARCH.format(a) for a in ANSWERS]
    return [(r, {"target": t}) for r, t in itertools.product(responses, TARGETS)]


def per_sample_us(fn: Any, rows: list[tuple[str, dict[str, Any]]], rounds: int) -> float:
    best = float("inf")
    with contextlib.redirect_stdout(io.StringIO()):
        for _ in range(rounds):
            began = time.perf_counter()
            for response, truth in rows:
                fn(response, truth)
            best = min(best, time.perf_counter() - began)
    return best / len(rows) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    verl = verl_qa_em()
    rows = samples()
    ours = [compute_score("nq", r, t)["score"] for r, t in rows]
    with contextlib.redirect_stdout(io.StringIO()):
        theirs = [float(verl.compute_score(r, t)) for r, t in rows]
    print(f"{len(rows)} samples, same score on {sum(a == b for a, b in zip(ours, theirs))}")
    t_ours = per_sample_us(lambda r, t: compute_score("nq", r, t), rows, args.rounds)
    t_f1 = per_sample_us(lambda r, t: f1_score("nq", r, t), rows, args.rounds)
    t_verl = per_sample_us(verl.compute_score, rows, args.rounds)
    print(f"qa_em {t_ours:.1f} us/sample, qa_f1 {t_f1:.1f}, verl {t_verl:.1f} (qa_em/verl {t_ours / t_verl:.2f}x)")
    for size in (4_000, 8_000, 16_000, 32_000, 1_000_000):
        hostile = "<answer>" * (size // 8)
        began = time.perf_counter()
        compute_score("nq", hostile, "x")
        ours_s = time.perf_counter() - began
        verl_s = "-"
        if size <= 32_000:
            began = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                verl.compute_score(hostile, {"target": ["x"]})
            verl_s = f"{time.perf_counter() - began:.3f} s"
        print(f"{size // 8:>7} unclosed <answer> tags ({size:,} chars): qa_em {ours_s * 1e3:.2f} ms, verl {verl_s}")


if __name__ == "__main__":
    main()
