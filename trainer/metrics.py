"""Per-step metrics: one JSON object per line in ``metrics.jsonl``, a console line, a PNG curve."""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

CONSOLE_KEYS = (
    ("reward_mean", "reward {:.3f}"),
    ("reward_std", "±{:.3f}"),
    ("reward_failed", "failed {}"),
    ("reward_timed_out", "timeout {}"),
    ("reward_skipped", "skipped {}"),
    ("loss", "loss {:+.4f}"),
    ("kl", "kl {:.4f}"),
    ("response_length", "len {:.1f}"),
    ("reward_latency_s", "rwd {:.3f}s"),
    ("reward_hidden_frac", "hidden {:.0%}"),
    ("tokens_per_s", "{:.0f} tok/s"),
)


class MetricsLog:
    """Appends step records to ``path`` (flushed per line, so a killed run keeps its log)."""

    def __init__(self, path: Path, records: Sequence[dict[str, Any]] = ()) -> None:
        """Start ``path`` afresh, holding ``records`` (a resumed run's earlier steps)."""
        self.path = path
        self.records: list[dict[str, Any]] = list(records)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = path.open("w", encoding="utf-8")
        self._file.write("".join(json.dumps(r) + "\n" for r in self.records))
        self._file.flush()

    @classmethod
    def continuing(cls, path: Path, upto_step: int) -> MetricsLog:
        """Keep ``path``'s records up to ``upto_step`` (the checkpoint's) and append after them."""
        kept = [r for r in read_metrics(path) if r.get("step", 0) <= upto_step] \
            if path.exists() else []
        return cls(path, kept)

    def write(self, record: Mapping[str, Any]) -> None:
        """Record one step."""
        clean = {key: _json_safe(value) for key, value in record.items()}
        self.records.append(clean)
        self._file.write(json.dumps(clean) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def __enter__(self) -> MetricsLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def console_line(record: Mapping[str, Any], total_steps: int) -> str:
    """A compact one-line summary of a step record."""
    parts = [f"step {record['step']:>{len(str(total_steps))}}/{total_steps}"]
    for key, fmt in CONSOLE_KEYS:
        value = record.get(key)
        if value is not None:
            parts.append(fmt.format(value))
    return "  ".join(parts)


class MetricsFileError(ValueError):
    """A ``metrics.jsonl`` line other than a torn last one is not a JSON object."""


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """The step records of a ``metrics.jsonl`` file.

    A last line without its newline that does not parse was torn by a kill
    (or a full disk) mid-write: it is dropped, as the step never finished.
    Any other unreadable line is a :class:`MetricsFileError` naming it.
    """
    lines = path.read_text(encoding="utf-8").split("\n")
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            if number == len(lines):  # no newline after it: the write never completed
                break
            raise MetricsFileError(f"{path}, line {number}: not a JSON record ({e.msg})") from None
        if not isinstance(record, dict):
            raise MetricsFileError(f"{path}, line {number}: not a JSON object")
        records.append(record)
    return records


def plot_reward_curve(records: Sequence[Mapping[str, Any]], path: Path, title: str) -> None:
    """Draw reward mean (with a ±std band and a moving average) against step to a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [(r["step"], r["reward_mean"], *_band(r))
              for r in records if r.get("reward_mean") is not None]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    if points:
        steps, means, lows, highs = zip(*points)
        ax.fill_between(steps, lows, highs, alpha=0.15, label="± std (within min..max)")
        ax.plot(steps, means, lw=1, alpha=0.6, label="reward mean")
        ax.plot(steps, moving_average(means, 10), lw=2, label="moving average (10)")
        ax.legend(loc="lower right")
    else:
        ax.text(0.5, 0.5, "no scored samples", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("step")
    ax.set_ylabel("reward")
    ax.set_title(textwrap.fill(title, 90), fontsize=9)  # a file reward's name is long
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _band(record: Mapping[str, Any]) -> tuple[float, float]:
    """mean ± std, clipped to the step's observed min and max (a reward in [0, 1] stays there)."""
    mean, std = record["reward_mean"], record.get("reward_std") or 0.0
    low, high = record.get("reward_min"), record.get("reward_max")
    return (max(mean - std, low if low is not None else -math.inf),
            min(mean + std, high if high is not None else math.inf))


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """Trailing mean over up to ``window`` values (shorter at the start)."""
    out: list[float] = []
    total = 0.0
    for i, value in enumerate(values):
        total += value
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def _json_safe(value: Any) -> Any:
    """NaN and infinities are not JSON: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
