"""open-r1's shaping rewards: time per sample on typical responses, and on hostile ones.

    python plugins/format/benchmarks/bench_shaping.py [--rounds N]

Typical: 64 R1-style responses of ~2 kB (a think block of numbered steps, a
boxed answer, half of them right). Hostile: 1 MB responses built to make a
backtracking pattern or a quadratic scan slow. cosine_length's figure is
mostly math-verify's parse and verify (open-r1's check), which runs here in
the main thread with math-verify's own timeouts, as open-r1 runs it.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from verl_rewards_format import cosine_length, reasoning_steps, repetition, tag_count

GOLD = "\\frac{63}{400}"


def responses() -> list[str]:
    out = []
    for i in range(64):
        steps = "\n".join(f"Step {k}: we multiply {k} by {i} and carry the {k + i}." for k in range(1, 25))
        answer = GOLD if i % 2 == 0 else f"\\frac{{{i}}}{{400}}"
        out.append(f"<think>\n{steps}\nFirst, check. Finally, box it.\n</think>\n<answer>\n\\boxed{{{answer}}}\n</answer>")
    return out


def per_sample_us(fn: Callable[[str], Any], texts: list[str], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        began = time.perf_counter()
        for text in texts:
            fn(text)
        best = min(best, time.perf_counter() - began)
    return best / len(texts) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    texts = responses()
    rewards: dict[str, Callable[[str], Any]] = {
        "cosine_length": lambda t: cosine_length.compute_score("", t, GOLD),
        "repetition_penalty": lambda t: repetition.compute_score("", t, ""),
        "tag_count": lambda t: tag_count.compute_score("", t, ""),
        "reasoning_steps": lambda t: reasoning_steps.compute_score("", t, ""),
    }
    rewards["cosine_length"](texts[0])  # math-verify's import and first parse
    print(f"{len(texts)} responses of ~{sum(map(len, texts)) // len(texts)} chars, best of {args.rounds}:")
    for name, fn in rewards.items():
        print(f"  {name:<20} {per_sample_us(fn, texts, args.rounds):9.1f} us/sample")
    hostile = {"Step + 1M digits": "Step " + "1" * 1_000_000, "200k 'Step 1'": "Step 1" * 200_000,
               "1M newlines": "\n" * 1_000_000, "1M words, 3 distinct": "a b c " * 333_333}
    for name in ("repetition_penalty", "tag_count", "reasoning_steps"):
        for label, text in hostile.items():
            began = time.perf_counter()
            rewards[name](text)
            print(f"  {name:<20} {label:<22} {(time.perf_counter() - began) * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
