"""A reproducible batch of GSM8K-style responses for comparing ``gsm8k`` with verl's scorer.

About 140 tokens each (a worked solution, then a final line), with right,
wrong, malformed, comma, negative and decimal answers in fixed proportions.
Used by ``test_gsm8k_verl_parity.py`` and ``benchmarks/bench_gsm8k.py``.
"""

from __future__ import annotations

import random
from typing import NamedTuple

_STEPS = (
    "{name} has {a} {item}s and buys {b} more, so {name} has {a} + {b} = {s} {item}s.",
    "Each {item} costs ${c}, so {s} {item}s cost {s} * {c} = ${p}.",
    "{name} gives away {d} of them, which leaves {s} - {d} = {r}.",
    "Half of that is {r} / 2 = {h}, and the rest is kept for the week.",
    "Adding the {e} {item}s from the morning gives {r} + {e} = {t} in total.",
)
_NAMES = ("Natalia", "James", "Weng", "Betty", "Julie", "Mark", "Ken", "Alexis")
_ITEMS = ("clip", "apple", "book", "egg", "ticket", "marble", "pencil")


class Row(NamedTuple):
    """One sample: the response, the reference as verl's data stores it, and what was written."""

    solution_str: str
    ground_truth: str
    kind: str


def _final_line(rng: random.Random, truth: int) -> tuple[str, str, str]:
    """(final line, ground truth, kind)."""
    kind = rng.choice(
        ["right"] * 6 + ["wrong"] * 3
        + ["comma", "negative", "decimal", "decimal_zeros", "no_space", "dollar", "period",
           "unit", "no_marker", "empty", "bold", "twice", "comma_wrong", "text"]
    )
    big = truth * 1000 + rng.randint(0, 999)
    lines = {
        "right": (f"#### {truth}", str(truth)),
        "wrong": (f"#### {truth + rng.randint(1, 9)}", str(truth)),
        "comma": (f"#### {big:,}", str(big)),
        "comma_wrong": (f"#### {big:,}", str(big + 1)),
        "negative": (f"#### -{truth}", f"-{truth}"),
        "decimal": (f"#### {truth}.5", f"{truth}.5"),
        "decimal_zeros": (f"#### {truth}.50", f"{truth}.5"),
        "no_space": (f"####{truth}", str(truth)),
        "dollar": (f"#### ${truth}", str(truth)),
        "period": (f"#### {truth}.", str(truth)),
        "unit": (f"#### {truth} dollars", str(truth)),
        "no_marker": (f"The answer is {truth}.", str(truth)),
        "empty": ("####", str(truth)),
        "bold": (f"**#### {truth}**", str(truth)),
        "twice": (f"#### {truth + 1}\nWait, that is off by one.\n#### {truth}", str(truth)),
        "text": (f"#### {truth} is the answer", str(truth)),
    }
    line, ground_truth = lines[kind]
    return line, ground_truth, kind


def gsm8k_batch(size: int = 2048, seed: int = 0) -> list[Row]:
    """``size`` responses of about 140 tokens, the same ones for the same seed."""
    rng = random.Random(seed)
    rows = []
    for _ in range(size):
        a, b, c, d, e = (rng.randint(2, 60) for _ in range(5))
        s = a + b
        values = {"name": rng.choice(_NAMES), "item": rng.choice(_ITEMS), "a": a, "b": b,
                  "c": c, "d": d, "e": e, "s": s, "p": s * c, "r": s - d, "h": (s - d) / 2,
                  "t": s - d + e}
        steps = [step.format(**values) for step in _STEPS] * 2
        line, ground_truth, kind = _final_line(rng, values["t"])
        rows.append(Row(" ".join(steps) + "\n" + line, ground_truth, kind))
    return rows
