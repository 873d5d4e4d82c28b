"""The streaming loop of ``verl-rewards score``: read a batch, score it, write it.

Memory holds one batch. Rows are written in input order as each batch
returns; an interrupted run leaves whole rows and ``--resume`` continues
them (after checking it is the same run, :mod:`.runrecord`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import ExecutorError, RewardError, SampleError
from ..results import BatchResult
from ..samples import REQUIRED, Sample, as_samples
from ..scorer import Scorer
from . import runrecord
from .claim import claimed
from .errors import InputError, UsageError
from .rowbase import Batch, Sink, WriteMode, is_stdio, label, too_few_rows
from .rowio import last_row, open_sink, read_batches

SHOWN_ERRORS = 3  # distinct error texts kept for --verbose and the all-failed message
EXPLANATION = "explanation"  # a reward's extra key saying why a sample scored what it did
SHOWN_EXPLANATIONS = 3  # rows whose explanation --verbose prints


@dataclasses.dataclass(frozen=True)
class Plan:
    """What to score into what, as the command line asked."""

    source: Path
    target: Path
    mode: WriteMode
    batch_size: int | None = None
    allow_empty: bool = False
    progress: bool = True
    columns: Mapping[str, str] = dataclasses.field(default_factory=dict)  # sample field -> input column


class Tally:
    """Counts accumulated over the batches of one run (no rows are kept)."""

    def __init__(self) -> None:
        self.kept = 0  # whole rows an earlier run left, continued by --resume
        self.scored = 0
        self.skipped = 0  # failed samples written with a null score (on_error=skip)
        self.statuses: Counter[str] = Counter()
        self.error_types: Counter[str] = Counter()
        self.errors: dict[str, None] = {}  # the first distinct errors
        self.explanations: list[tuple[int, str]] = []  # (row, text): the first rows with one
        self.ok_sum = 0.0
        self.begin = self.start = self.end = time.perf_counter()

    def add(self, result: BatchResult, skip: bool) -> None:
        """Count one batch's results."""
        for offset, text in enumerate(result.extra_info.get(EXPLANATION, ())):
            if len(self.explanations) >= SHOWN_EXPLANATIONS:
                break
            if isinstance(text, str) and text:
                self.explanations.append((self.written + offset + 1, text))
        self.scored += len(result.statuses)
        self.statuses.update(result.statuses)
        if skip:
            self.skipped += len(result.statuses) - result.n_ok
        self.error_types.update(e.partition(":")[0] for e in result.errors if e)
        for error in result.errors:
            if error and len(self.errors) < SHOWN_ERRORS:
                self.errors.setdefault(error)
        self.ok_sum += sum(result.ok_scores())

    @property
    def written(self) -> int:
        """Whole rows the output holds."""
        return self.kept + self.scored

    @property
    def all_failed(self) -> bool:
        """Whether the run scored samples and none of them scored."""
        return self.scored > 0 and self.statuses["ok"] == 0


def run(scorer: Scorer, plan: Plan) -> Tally:
    """Claim the output (one run per output file), check the input whole (a file), open the
    output, score batch by batch; return the counts. Errors say how many whole rows the
    output holds and how to continue."""
    with contextlib.nullcontext() if is_stdio(plan.target) else claimed(plan.target):
        return _run(scorer, plan)


def _run(scorer: Scorer, plan: Plan) -> Tally:
    total = None if is_stdio(plan.source) else _validate_input(plan.source, plan.columns)
    if total == 0 and not plan.allow_empty:
        raise _empty(plan.source)
    record = None if is_stdio(plan.target) else runrecord.RunRecord.of(
        plan.source, scorer.provenance, scorer.config, plan.columns)
    sink, kept = open_sink(plan.target, plan.mode)
    tally = Tally()
    tally.kept = kept
    started: list[bool] = []

    def begin() -> None:  # the output changes only once rows are coming
        if not started:
            sink.begin()
            if record is not None:
                runrecord.save(plan.target, record)
            started.append(True)

    try:
        if record is not None:
            runrecord.check_resume(plan.target, record, kept)
        with _sigterm_as_interrupt():
            _stream(scorer, plan, sink, begin, total, tally)
        if not tally.written and not plan.allow_empty:
            raise _empty(plan.source)
        begin()  # an empty input (--allow-empty), or a resume with nothing left
    except BaseException as e:
        sink.close(failed=True)
        if isinstance(e, RewardError):
            raise _with_kept_rows(e, plan, tally) from e
        if isinstance(e, ExecutorError) and started:  # the executor gave up: what is written stays
            raise ExecutorError(f"{e}; {_kept(plan, tally)}") from e
        if isinstance(e, KeyboardInterrupt):
            print(f"verl-rewards: interrupted: {_kept(plan, tally)}", file=sys.stderr)
        raise
    sink.close()
    return tally


def _empty(source: Path) -> UsageError:
    return UsageError(f"input {label(source, 'input')} holds no rows; add --allow-empty to "
                      f"write an empty output")


def _kept(plan: Plan, tally: Tally) -> str:
    """What a stopped run's output holds, and how to continue it."""
    hint = "" if is_stdio(plan.target) else "; add --resume to continue"
    return f"{label(plan.target, 'output')} holds {tally.written} whole rows{hint}"


def _with_kept_rows(error: RewardError, plan: Plan, tally: Tally) -> RewardError:
    """``on_error=raise`` stopped the run: the error also says what the output holds."""
    return RewardError(error.plugin, error.index, f"{error.cause}; {_kept(plan, tally)}")


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (kill, timeout, a job scheduler) ends the run like Ctrl-C: whole rows kept."""
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


def _stream(
    scorer: Scorer, plan: Plan, sink: Sink, begin: Callable[[], None], total: int | None,
    tally: Tally,
) -> None:
    size = plan.batch_size or (_auto_batch(total) if total is not None else 256)
    skip = scorer.config.on_error == "skip"
    with contextlib.ExitStack() as stack, _progress(scorer, plan, total, tally.kept) as bar:
        for batch in _batches(plan, size, tally.kept, validated=total is not None):
            samples = _samples(batch, plan.source, plan.columns)
            if not tally.scored:
                stack.enter_context(scorer)
                tally.start = time.perf_counter()
            result = _score_batch(scorer, samples, batch, plan.source, tally.written)
            begin()
            sink.write(batch, produced_columns(result, skip))
            tally.add(result, skip)
            bar.update(len(samples))
        tally.end = time.perf_counter()


def _batches(plan: Plan, size: int, kept: int, validated: bool) -> Iterator[Batch]:
    """The input after the ``kept`` rows. stdin cannot be hashed up front: there the last
    kept row must be the row the output ended with, or the resume is refused."""
    if not (is_stdio(plan.source) and kept):
        yield from read_batches(plan.source, size, skip=kept, validated=validated)
        return
    ended = last_row(plan.target) or {}
    seen = 0
    for batch in read_batches(plan.source, size):
        if seen + len(batch.rows) < kept:
            seen += len(batch.rows)
            continue
        if seen < kept:
            start = kept - seen
            _check_boundary(plan, kept, ended, batch.rows[start - 1])
            batch, seen = Batch(batch.rows[start:], batch.where[start:]), kept
        seen += len(batch.rows)
        if batch.rows:
            yield batch
    if seen < kept:
        raise too_few_rows(plan.source, kept)


def _check_boundary(plan: Plan, kept: int, ended: dict[str, Any], row: dict[str, Any]) -> None:
    differ = [c for c in (plan.columns.get(k, k) for k in REQUIRED) if ended.get(c) != row.get(c)]
    if differ:
        raise UsageError(
            f"cannot resume {plan.target}: its last row ({kept}) is not row {kept} of "
            f"{label(plan.source, 'input')} ({', '.join(differ)} differ): the rows came from "
            f"another input; score again with --overwrite")


def produced_columns(result: BatchResult, skip: bool) -> dict[str, list[Any]]:
    """What scoring adds to each row: ``score`` (null for a failed sample under
    ``on_error=skip``), the reward's extra keys, ``error`` and ``status``."""
    scores: list[Any] = list(result.scores)
    if skip:
        scores = [s if st == "ok" else None for s, st in zip(scores, result.statuses)]
    columns: dict[str, list[Any]] = {"score": scores}
    for key, values in result.extra_info.items():
        if key not in ("score", "error", "status"):
            columns[key] = list(values)
    columns["error"] = list(result.errors)
    columns["status"] = list(result.statuses)
    return columns


def _validate_input(path: Path, columns: Mapping[str, str]) -> int:
    """Read the whole input once, before any worker starts: bad rows exit 2 with file and line."""
    count = 0
    for batch in read_batches(path, 1024):
        _samples(batch, path, columns)
        count += len(batch.rows)
    return count


def _samples(batch: Batch, path: Path, columns: Mapping[str, str]) -> list[Sample]:
    rows = batch.rows if not columns else [_mapped(row, columns) for row in batch.rows]
    try:
        return as_samples(rows)
    except SampleError as e:
        message = str(e).removeprefix(f"sample {e.index}: ")  # the line says which
        missing = [k for k in REQUIRED if k not in rows[e.index]] if isinstance(rows[e.index], dict) else []
        if missing:
            message += _columns_found(batch.rows[e.index], missing, columns)
        raise InputError(f"{label(path, 'input')}, {batch.where[e.index]}: {message}") from e


def _mapped(row: dict[str, Any], columns: Mapping[str, str]) -> dict[str, Any]:
    """``row`` with each sample field read from the column ``--columns`` names for it."""
    mapped = {k: v for k, v in row.items() if k not in columns}
    mapped.update((field, row[column]) for field, column in columns.items() if column in row)
    return mapped


def _columns_found(row: dict[str, Any], missing: list[str], columns: Mapping[str, str]) -> str:
    """What a row without a required field has instead, and how to map it."""
    named = [f"{columns[k]!r} (--columns {k}={columns[k]})" for k in missing if k in columns]
    found = ", ".join(repr(c) for c in row) or "none"
    if named:
        return f"; it has no column {', '.join(named)}; its columns: {found}"
    example = ",".join(f"{k}=COLUMN" for k in missing)
    return f"; its columns: {found}; if one holds it under another name, add --columns {example}"


def _progress(scorer: Scorer, plan: Plan, total: int | None, kept: int) -> Any:
    from tqdm import tqdm

    show = plan.progress and sys.stderr.isatty()
    return tqdm(total=None if total is None else max(total - kept, 0), unit="sample",
                file=sys.stderr, disable=not show, dynamic_ncols=True,
                desc=scorer.provenance.name)


def _score_batch(
    scorer: Scorer, samples: list[Sample], batch: Batch, path: Path, offset: int
) -> BatchResult:
    try:
        return scorer.score(samples)
    except RewardError as e:  # its index counts from this batch's start
        cause = f"{e.cause} ({label(path, 'input')}, {batch.where[e.index]})"
        raise RewardError(e.plugin, offset + e.index, cause) from e


def _auto_batch(n: int) -> int:
    return min(2048, max(64, math.ceil(n / 100)))
