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
from .output import progress_bar, say
from .rowbase import Sink, WriteMode, is_stdio, label, too_few_rows
from .rowio import last_row, open_sink, read_batches
from .rowsamples import ADDED, Expanded, chunks, expand_batch

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
    total, expands = (None, True) if is_stdio(plan.source) else _validate_input(plan.source, plan.columns)
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
            _stream(scorer, plan, sink, begin, (total, expands), tally)
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
            say("interrupted", _kept(plan, tally))
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
    scorer: Scorer, plan: Plan, sink: Sink, begin: Callable[[], None],
    counted: tuple[int | None, bool], tally: Tally,
) -> None:
    total, expands = counted
    size = plan.batch_size or (_auto_batch(total) if total is not None else 256)
    skip = scorer.config.on_error == "skip"
    with contextlib.ExitStack() as stack, _progress(scorer, plan, total, tally.kept) as bar:
        for part in _batches(plan, size, tally.kept, validated=total is not None, expands=expands):
            samples = _samples(part, plan.source, plan.columns)
            if not tally.scored:
                stack.enter_context(scorer)
                tally.start = time.perf_counter()
            result = _score_batch(scorer, samples, part, plan.source, tally.written)
            begin()
            sink.write(part.batch, produced_columns(result, skip))
            tally.add(result, skip)
            bar.update(len(samples))
        tally.end = time.perf_counter()


def _batches(plan: Plan, size: int, kept: int, validated: bool, expands: bool) -> Iterator[Expanded]:
    """The input's samples after the ``kept`` ones (rows an earlier run wrote), in pieces of
    at most ``size``. When no row lists several responses, a kept row is an input row, and
    the reader skips them; else the samples are counted from the start. stdin cannot be
    hashed up front: there the last kept sample must be the row the output ended with, or
    the resume is refused."""
    if not expands:
        yield from chunks(_expanded(plan, size, kept, validated), size)
        return
    if not (is_stdio(plan.source) and kept):
        yield from chunks(_expanded(plan, size, 0, validated), size, skip=kept)
        return
    ended = last_row(plan.target) or {}
    seen = 0
    for part in chunks(_expanded(plan, size, 0, validated), size):
        if seen + len(part) < kept:
            seen += len(part)
            continue
        if seen < kept:
            start = kept - seen
            _check_boundary(plan, kept, ended, part.batch.rows[start - 1])
            part, seen = part.slice(start), kept
        seen += len(part)
        if len(part):
            yield part
    if seen < kept:
        raise too_few_rows(plan.source, kept)


def _expanded(plan: Plan, size: int, skip: int, validated: bool) -> Iterator[Expanded]:
    """Each batch of input rows (after ``skip`` rows) as the samples it holds."""
    number = skip
    for batch in read_batches(plan.source, size, skip=skip, validated=validated):
        yield expand_batch(batch, plan.columns, plan.source, number)
        number += len(batch.rows)


def _check_boundary(plan: Plan, kept: int, ended: dict[str, Any], row: dict[str, Any]) -> None:
    compared = dict.fromkeys([*(plan.columns.get(k, k) for k in REQUIRED), *ADDED])
    differ = [c for c in compared if ended.get(c) != row.get(c)]
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


def _validate_input(path: Path, columns: Mapping[str, str]) -> tuple[int, bool]:
    """Read the whole input once, before any worker starts: bad rows exit 2 with file and
    line. The samples it holds, and whether a row lists several responses."""
    count, expands, number = 0, False, 0
    for batch in read_batches(path, 1024):
        part = expand_batch(batch, columns, path, number, arrow=False)
        _samples(part, path, columns)
        count += len(part)
        expands |= part.expanded
        number += len(batch.rows)
    return count, expands


def _samples(part: Expanded, path: Path, columns: Mapping[str, str]) -> list[Sample]:
    rows = part.fields
    try:
        return as_samples(rows)
    except SampleError as e:
        message = str(e).removeprefix(f"sample {e.index}: ")  # the line says which
        missing = [k for k in REQUIRED if k not in rows[e.index]]
        if missing:
            message += _columns_found(part.batch.rows[e.index], missing, columns)
        raise InputError(f"{label(path, 'input')}, {part.batch.where[e.index]}: {message}") from e


def _columns_found(row: dict[str, Any], missing: list[str], columns: Mapping[str, str]) -> str:
    """What a row without a required field has instead, and how to map it."""
    named = [_not_there(row, columns[k], k) for k in missing if k in columns]
    found = ", ".join(repr(c) for c in row) or "none"
    if named:
        return f"; it has no column {', '.join(named)}; its columns: {found}"
    example = ",".join(f"{k}=COLUMN" for k in missing)
    hint = f"; its columns: {found}; if one holds it under another name, add --columns {example}"
    if "ground_truth" in missing and isinstance(row.get("reward_model"), Mapping):
        keys = ", ".join(repr(k) for k in row["reward_model"]) or "none"
        hint += (f" (a dotted path reaches into a struct: its 'reward_model' holds {keys}, "
                 f"not verl's 'ground_truth')")
    return hint


def _not_there(row: dict[str, Any], path: str, field: str) -> str:
    """A path ``--columns`` names that ``row`` lacks, with what its struct holds instead."""
    named = f"{path!r} (--columns {field}={path})"
    head, dot, _ = path.partition(".")
    if dot and isinstance(row.get(head), Mapping):
        keys = ", ".join(repr(k) for k in row[head]) or "none"
        named += f" ({head!r} holds {keys})"
    return named


def _progress(scorer: Scorer, plan: Plan, total: int | None, kept: int) -> Any:
    return progress_bar(None if total is None else max(total - kept, 0), scorer.provenance.name,
                        plan.progress)


def _score_batch(
    scorer: Scorer, samples: list[Sample], part: Expanded, path: Path, offset: int
) -> BatchResult:
    try:
        return scorer.score(samples)
    except RewardError as e:  # its index counts from this batch's start
        cause = f"{e.cause} ({label(path, 'input')}, {part.batch.where[e.index]})"
        raise RewardError(e.plugin, offset + e.index, cause) from e


def _auto_batch(n: int) -> int:
    return min(2048, max(64, math.ceil(n / 100)))
