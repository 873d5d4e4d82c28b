"""``verl-rewards score``: score a JSONL or Parquet file of samples."""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import EXIT_OK, InputError
from .output import emit

if TYPE_CHECKING:
    from ..results import BatchResult
    from ..samples import Sample
    from ..scorer import Scorer

NAME = "score"
HELP = "Score a JSONL or Parquet file of samples with the reward a config selects."
EPILOG = """\
examples:
  verl-rewards score --input samples.jsonl --output scored.jsonl \\
      reward.plugin=exact_match reward.executor=local
  verl-rewards score -i samples.parquet -o scored.parquet --config trainer.yaml \\
      reward.num_workers=4 reward.timeout_s=10

Each input row needs data_source, solution_str and ground_truth (extra_info
optional). Each output row is the input row plus `score`, the reward's extra
keys and `error` (null when it scored). Overrides are the trainer's `reward.*`
keys; --config takes a trainer config with a `reward:` section, or a bare one.
The executor is reward.executor (default ray). Exits 2 on bad input or
config, 1 when a sample fails and reward.on_error=raise."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this command's arguments."""
    parser.add_argument("-i", "--input", required=True, type=Path, metavar="FILE",
                        help="samples: .jsonl or .parquet")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE",
                        help="where to write scored rows: .jsonl or .parquet")
    parser.add_argument("-c", "--config", type=Path, metavar="FILE.yaml",
                        help="YAML config: a trainer config with a `reward:` section, or a bare one")
    parser.add_argument("--batch-size", type=_positive_int, metavar="N",
                        help="samples per scoring call (the progress bar moves per call); "
                             "default: about 1%% of the input, 64 to 2048")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (it is only drawn on a terminal anyway)")
    parser.add_argument("overrides", nargs="*", metavar="reward.KEY=VALUE",
                        help="config overrides, e.g. reward.plugin=gsm8k reward.executor=local")


class _Tally:
    """Results accumulated over the batches of one run."""

    def __init__(self) -> None:
        self.results: list[dict[str, Any]] = []
        self.statuses: Counter[str] = Counter()
        self.error_types: Counter[str] = Counter()
        self.ok_scores: list[float] = []
        self.extra_keys: dict[str, None] = {}  # an ordered set

    def add(self, result: BatchResult) -> None:
        self.results.extend(result.rows())
        self.statuses.update(result.statuses)
        self.error_types.update(e.partition(":")[0] for e in result.errors if e)
        self.ok_scores.extend(result.ok_scores())
        self.extra_keys.update(dict.fromkeys(result.extra_info))

    @property
    def produced(self) -> set[str]:
        """The columns the reward writes; its values replace input columns of the same name."""
        return {"score", "error", *self.extra_keys}


def run(args: argparse.Namespace) -> int:
    """Validate config and input, score in batches, write the output, summarise."""
    from .rowfiles import format_of, read_rows, write_rows

    format_of(args.output, "output")  # fail on a bad extension before any work
    scorer = _scorer(args.config, args.overrides)
    rows, where = read_rows(args.input)
    samples = _samples(rows, where, args.input)
    tally, timing = _Tally(), _Timing()
    if samples:
        with scorer:
            timing.started()
            _score_all(scorer, samples, args.batch_size or _auto_batch(len(samples)),
                       tally, progress=not args.no_progress, where=(args.input, where))
            timing.scored()
    columns = [*_input_columns(rows, tally), "score", *tally.extra_keys, "error"]
    write_rows(args.output, _output_rows(rows, tally), columns)
    emit(*_summary(scorer, tally, timing), f"wrote {len(rows)} rows to {args.output}")
    return EXIT_OK


class _Timing:
    """When the executor was asked to start, when it had, and when scoring ended."""

    def __init__(self) -> None:
        self.begin = self.start = self.end = time.perf_counter()

    def started(self) -> None:
        self.start = time.perf_counter()

    def scored(self) -> None:
        self.end = time.perf_counter()


def _scorer(config: Path | None, overrides: Sequence[str]) -> Scorer:
    from ..scorer import Scorer

    # The config layer turns YAML, grammar and interpolation errors into
    # ConfigErrors naming the file, so nothing needs wrapping here.
    return Scorer.from_config(config, overrides)


def _samples(rows: list[dict[str, Any]], where: list[str], path: Path) -> list[Sample]:
    from ..errors import SampleError
    from ..samples import as_samples

    try:
        return as_samples(rows)
    except SampleError as e:
        raise InputError(f"{path}, {where[e.index]}: {e}") from e


def _score_all(
    scorer: Scorer, samples: list[Sample], batch_size: int, tally: _Tally, progress: bool,
    where: tuple[Path, list[str]],
) -> None:
    from tqdm import tqdm

    from ..errors import RewardError

    show = progress and sys.stderr.isatty()
    with tqdm(total=len(samples), unit="sample", file=sys.stderr, disable=not show,
              dynamic_ncols=True, desc=scorer.provenance.name) as bar:
        for start in range(0, len(samples), batch_size):
            batch = samples[start:start + batch_size]
            try:
                result = scorer.score(batch)
            except RewardError as e:  # its index counts from this batch's start
                index = start + e.index
                cause = f"{e.cause} ({where[0]}, {where[1][index]})"
                raise RewardError(e.plugin, index, cause) from e
            tally.add(result)
            bar.update(len(batch))


def _auto_batch(n: int) -> int:
    return min(2048, max(64, math.ceil(n / 100)))


def _output_rows(rows: list[dict[str, Any]], tally: _Tally) -> list[dict[str, Any]]:
    """Each input row, then ``score``, every extra key the reward returned, ``error``."""
    produced = tally.produced
    out = []
    for row, result in zip(rows, tally.results):
        kept = {k: v for k, v in row.items() if k not in produced}
        extra = {k: result.get(k) for k in tally.extra_keys}  # None where a batch had none
        out.append({**kept, "score": result["score"], **extra, "error": result["error"]})
    return out


def _input_columns(rows: list[dict[str, Any]], tally: _Tally) -> list[str]:
    from .rowfiles import columns_of

    produced = tally.produced
    return [c for c in columns_of(rows) if c not in produced]


def _summary(scorer: Scorer, tally: _Tally, timing: _Timing) -> list[str]:
    n = len(tally.results)
    elapsed, startup = timing.end - timing.start, timing.start - timing.begin
    rate = f"{n / elapsed:,.1f} samples/s" if elapsed > 0 else "n/a"
    mean = (f"{sum(tally.ok_scores) / len(tally.ok_scores):.4f}" if tally.ok_scores
            else "n/a")
    errors = ", ".join(f"{t} {c}" for t, c in tally.error_types.most_common()) or "none"
    return [
        f"scored {n} samples with {scorer.provenance.display_name} on the "
        f"{scorer.config.executor} executor in {elapsed:.2f} s ({rate}; "
        f"executor start {startup:.2f} s)",
        f"  ok {tally.statuses['ok']}, failed {tally.statuses['failed']}, "
        f"timed out {tally.statuses['timeout']}",
        f"  mean score {mean} (over ok samples)",
        f"  errors by type: {errors}",
    ]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value
