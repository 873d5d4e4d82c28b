"""Write ``toy_copy.jsonl``: prompts ``"4721:"`` whose completion should be ``"4721"``.

Run once; the output is committed. Deterministic: the same seed gives the same file.

    python examples/data/make_toy.py [--rows 256] [--digits 4] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

HERE = Path(__file__).parent


def make_rows(rows: int, digits: int, seed: int) -> list[dict[str, object]]:
    """``rows`` distinct copy prompts of ``digits`` random digits each."""
    if rows > 10**digits:
        raise ValueError(f"only {10**digits} distinct {digits}-digit strings exist")
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[dict[str, object]] = []
    while len(out) < rows:
        text = "".join(rng.choice("0123456789") for _ in range(digits))
        if text in seen:
            continue
        seen.add(text)
        out.append({
            "prompt": f"{text}:",
            "data_source": "toy_copy",
            "ground_truth": text,
            "extra_info": {"digits": digits},
        })
    return out


def main() -> None:
    """Parse arguments and write the JSONL file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--digits", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=HERE / "toy_copy.jsonl")
    args = parser.parse_args()
    rows = make_rows(args.rows, args.digits, args.seed)
    args.output.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"wrote {len(rows)} rows to {args.output}")


if __name__ == "__main__":
    main()
