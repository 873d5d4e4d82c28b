"""``verl-rewards score``: score a JSONL or Parquet file of samples."""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import EXIT_FAILURE, EXIT_OK, InputError
from .output import emit

if TYPE_CHECKING:
    from ..results import BatchResult
    from ..samples import Sample
    from ..scorer import Scorer
    from .rowfiles import Batch
    from .rowsinks import Sink

NAME = "score"
HELP = "Score a JSONL or Parquet file of samples with the reward a config selects."
EPILOG = """\
examples:
  verl-rewards score --input samples.jsonl --output scored.jsonl \\
      reward.plugin=exact_match reward.executor=local
  verl-rewards score -i samples.parquet -o scored.parquet --config trainer.yaml \\
      reward.num_workers=4 reward.timeout_s=10
  cat samples.jsonl | verl-rewards score -i - -o - reward.plugin=gsm8k > scored.jsonl
  verl-rewards score -i big.jsonl -o scored.jsonl --resume reward.plugin=gsm8k

Each input row needs data_source, solution_str and ground_truth (extra_info
optional). Each output row is the input row plus `score`, the reward's extra
keys and `error` (null when it scored). Rows are written in input order as
each batch finishes, so memory stays bounded and an interrupted run leaves
whole rows that --resume continues. Overrides are the trainer's `reward.*`
keys; --config takes a trainer config with a `reward:` section, or a bare one.
The executor is reward.executor (default ray). Exits 2 on bad input or
config (found before scoring starts), 1 when every sample failed or a sample
fails with reward.on_error=raise."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this command's arguments."""
    parser.add_argument("-i", "--input", required=True, type=Path, metavar="FILE",
                        help="samples: .jsonl or .parquet, or - for JSONL on stdin")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE",
                        help="where to write scored rows: .jsonl or .parquet, or - for JSONL "
                             "on stdout")
    parser.add_argument("-c", "--config", type=Path, metavar="FILE.yaml",
                        help="YAML config: a trainer config with a `reward:` section, or a bare one")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted run: keep the rows OUTPUT holds and score "
                             "the rest of the input")
    parser.add_argument("--batch-size", type=_positive_int, metavar="N",
                        help="samples per scoring call; rows are written as each call returns "
                             "(default: about 1%% of the input, 64 to 2048; 256 on stdin)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (it is only drawn on a terminal anyway)")
    parser.add_argument("overrides", nargs="*", metavar="reward.KEY=VALUE",
                        help="config overrides, e.g. reward.plugin=gsm8k reward.executor=local")


class _Tally:
    """Counts accumulated over the batches of one run (no rows are kept)."""

    def __init__(self) -> None:
        self.scored = 0
        self.statuses: Counter[str] = Counter()
        self.error_types: Counter[str] = Counter()
        self.errors: dict[str, None] = {}  # the first distinct errors, for --verbose
        self.ok_sum = 0.0

    def add(self, result: BatchResult) -> None:
        self.scored += len(result.statuses)
        self.statuses.update(result.statuses)
        self.error_types.update(e.partition(":")[0] for e in result.errors if e)
        for error in result.errors:
            if error and len(self.errors) < _SHOWN_ERRORS:
                self.errors.setdefault(error)
        self.ok_sum += sum(result.ok_scores())

    @property
    def all_failed(self) -> bool:
        return self.scored > 0 and self.statuses["ok"] == 0


_SHOWN_ERRORS = 3


def run(args: argparse.Namespace) -> int:
    """Validate config, input and output, then score and write batch by batch; summarise."""
    from .rowfiles import format_of, is_stdio, label
    from .rowsinks import open_sink

    format_of(args.input, "input")
    format_of(args.output, "output")  # fail on a bad extension before any work
    _check_distinct(args.input, args.output)
    scorer = _scorer(args.config, args.overrides)
    total = None if is_stdio(args.input) else _validate_input(args.input)
    sink, done = open_sink(args.output, args.resume)
    tally, timing = _Tally(), _Timing()
    try:
        with _sigterm_as_interrupt():
            _score_stream(scorer, args, sink, done, total, tally, timing)
    except BaseException as e:
        sink.close(failed=True)
        if isinstance(e, KeyboardInterrupt):
            where = label(args.output, "output")
            hint = ("" if is_stdio(args.output) else "; add --resume to continue")
            print(f"verl-rewards: interrupted: {where} holds {done + tally.scored} whole rows{hint}",
                  file=sys.stderr)
        raise
    sink.close()
    return _finish(args, scorer, tally, timing, done)


def _check_distinct(source: Path, target: Path) -> None:
    """Writing over the input would read an emptied file (and --resume would skip it all)."""
    from .errors import UsageError
    from .rowfiles import is_stdio

    if is_stdio(source) or is_stdio(target):
        return
    if source.resolve() == target.resolve():
        raise UsageError(f"the output file is the input file ({source}); write the scored rows "
                         f"to another file")


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (kill, timeout, a job scheduler) ends the run like Ctrl-C: whole rows kept,
    a Parquet output closed readable."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _score_stream(
    scorer: Scorer, args: argparse.Namespace, sink: Sink, done: int, total: int | None,
    tally: _Tally, timing: _Timing,
) -> None:
    from .rowfiles import read_batches

    size = args.batch_size or (_auto_batch(total) if total is not None else 256)
    with contextlib.ExitStack() as stack, _progress(scorer, args, total, done) as bar:
        for batch in read_batches(args.input, size, skip=done):
            samples = _samples(batch, args.input)
            if not tally.scored:
                stack.enter_context(scorer)
                timing.started()
            result = _score_batch(scorer, samples, batch, args.input, done + tally.scored)
            rows = _output_rows(batch.rows, result)
            sink.write(rows, _columns(batch.rows, result))
            tally.add(result)
            bar.update(len(samples))
        timing.scored()


def _finish(
    args: argparse.Namespace, scorer: Scorer, tally: _Tally, timing: _Timing, done: int
) -> int:
    from .rowfiles import label

    _say(args, *_summary(scorer, tally, timing),
         f"wrote {done + tally.scored} rows to {label(args.output, 'output')}"
         + (f" ({done} kept from the earlier run)" if done else ""))
    if getattr(args, "verbose", False):
        _show_error_sources(scorer, tally)
    if tally.all_failed:
        top, count = tally.error_types.most_common(1)[0] if tally.error_types else ("?", 0)
        example = next(iter(tally.errors), "")
        print(f"verl-rewards: error: every sample failed ({tally.scored}); most common "
              f"error: {top} ({count}), e.g. {example}", file=sys.stderr)
        return EXIT_FAILURE
    return EXIT_OK


def _say(args: argparse.Namespace, *lines: str) -> None:
    """The summary goes to stdout, unless the scored rows do."""
    from .rowfiles import is_stdio

    if is_stdio(args.output):
        for line in lines:
            print(line, file=sys.stderr)
    else:
        emit(*lines)


def _validate_input(path: Path) -> int:
    """Read the whole input once, before any worker starts: bad rows exit 2 with file and line."""
    from .rowfiles import read_batches

    count = 0
    for batch in read_batches(path, 1024):
        _samples(batch, path)
        count += len(batch.rows)
    return count


class _Timing:
    """When the executor was asked to start, when it had, and when scoring ended."""

    def __init__(self) -> None:
        self.begin = self.start = self.end = time.perf_counter()

    def started(self) -> None:
        self.start = time.perf_counter()

    def scored(self) -> None:
        self.end = time.perf_counter()


def _scorer(config: Path | None, overrides: Sequence[str]) -> Scorer:
    from ..errors import ConfigError
    from ..scorer import Scorer

    try:
        return Scorer.from_config(config, overrides)
    except ConfigError as e:
        if config is None or str(config) in str(e):  # parse errors name the file already
            raise
        raise ConfigError(f"{e} ({_source_of(e, config)}{_section_hint(config)})") from e


def _source_of(error: Exception, config: Path) -> str:
    """Whether ``config`` alone has ``error``, or the overrides brought it."""
    from ..config import load_config
    from ..errors import ConfigError

    try:
        load_config(config)
    except ConfigError as alone:
        if str(alone) == str(error):
            return f"in config file {config}"
    except Exception:  # noqa: BLE001 - only to say where; the error itself is known
        pass
    return f"from the overrides on config file {config}"


def _section_hint(config: Path) -> str:
    """A top-level ``rewards:`` holding one reward's keys is a typo for ``reward:``."""
    from ..config import RewardConfig

    try:
        import yaml

        data = yaml.safe_load(config.read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - only a hint; the error itself is already known
        return ""
    rewards = data.get("rewards") if isinstance(data, dict) and "reward" not in data else None
    import dataclasses

    keys = {f.name for f in dataclasses.fields(RewardConfig)}
    if isinstance(rewards, dict) and set(rewards) & keys - {"rewards"}:
        return "; its top-level `rewards:` holds one reward's keys: did you mean `reward:`?"
    return ""


def _samples(batch: Batch, path: Path) -> list[Sample]:
    from ..errors import SampleError
    from ..samples import as_samples
    from .rowfiles import label

    try:
        return as_samples(batch.rows)
    except SampleError as e:
        message = str(e).removeprefix(f"sample {e.index}: ")  # the line says which
        raise InputError(f"{label(path, 'input')}, {batch.where[e.index]}: {message}") from e


def _progress(scorer: Scorer, args: argparse.Namespace, total: int | None, done: int) -> Any:
    from tqdm import tqdm

    show = not args.no_progress and sys.stderr.isatty()
    return tqdm(total=None if total is None else max(total - done, 0), unit="sample",
                file=sys.stderr, disable=not show, dynamic_ncols=True,
                desc=scorer.provenance.name)


def _score_batch(
    scorer: Scorer, samples: list[Sample], batch: Batch, path: Path, offset: int
) -> BatchResult:
    from ..errors import RewardError
    from .rowfiles import label

    try:
        return scorer.score(samples)
    except RewardError as e:  # its index counts from this batch's start
        register_file_sources(scorer.ref)  # for --verbose's source line
        cause = f"{e.cause} ({label(path, 'input')}, {batch.where[e.index]})"
        raise RewardError(e.plugin, offset + e.index, cause) from e


def _auto_batch(n: int) -> int:
    return min(2048, max(64, math.ceil(n / 100)))


def _output_rows(rows: list[dict[str, Any]], result: BatchResult) -> list[dict[str, Any]]:
    """Each input row, then ``score``, every extra key the reward returned, ``error``."""
    extra_keys = list(result.extra_info)
    produced = {"score", "error", *extra_keys}
    out = []
    for row, scored in zip(rows, result.rows()):
        kept = {k: v for k, v in row.items() if k not in produced}
        extra = {k: scored.get(k) for k in extra_keys}  # None where a sample had none
        out.append({**kept, "score": scored["score"], **extra, "error": scored["error"]})
    return out


def _columns(rows: list[dict[str, Any]], result: BatchResult) -> list[str]:
    """The batch's input columns first, then ``score``, the extra keys, ``error``."""
    from .rowfiles import columns_of

    extra_keys = list(result.extra_info)
    produced = {"score", "error", *extra_keys}
    return [*(c for c in columns_of(rows) if c not in produced), "score", *extra_keys, "error"]


def _summary(scorer: Scorer, tally: _Tally, timing: _Timing) -> list[str]:
    n = tally.scored
    elapsed, startup = timing.end - timing.start, timing.start - timing.begin
    rate = f"{n / elapsed:,.1f} samples/s" if elapsed > 0 else "n/a"
    ok = tally.statuses["ok"]
    mean = f"{tally.ok_sum / ok:.4f}" if ok else "n/a"
    errors = ", ".join(f"{t} {c}" for t, c in tally.error_types.most_common()) or "none"
    return [
        f"scored {n} samples with {scorer.provenance.display_name} on the "
        f"{scorer.config.executor} executor in {elapsed:.2f} s ({rate}; "
        f"executor start {startup:.2f} s)",
        f"  ok {ok}, failed {tally.statuses['failed']}, "
        f"timed out {tally.statuses['timeout']}",
        f"  mean score {mean} (over ok samples)",
        f"  errors by type: {errors}",
    ]


def _show_error_sources(scorer: Scorer, tally: _Tally) -> None:
    """--verbose: each distinct error's frame in the reward's code, with its source line."""
    from ..frames import format_frames, parse_location

    register_file_sources(scorer.ref)
    for error in tally.errors:
        print(f"error: {error}", file=sys.stderr)
        frame = parse_location(error)
        if frame is not None:
            for line in format_frames([frame]):
                print(line, file=sys.stderr)


def register_file_sources(spec: object) -> None:
    """A file reward's source travels in its reference: show its lines even if the file is gone."""
    import linecache

    refs = getattr(spec, "refs", None) or (spec,)  # a composite's components
    for ref in refs:
        path, source = getattr(ref, "path", None), getattr(ref, "source", None)
        if isinstance(path, str) and isinstance(source, str):
            linecache.cache[path] = (len(source), None, source.splitlines(True), path)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value
