"""What ``verl-rewards score`` says when a run ends: the summary, the all-failed
error, and with ``--verbose`` each distinct error's line in the reward's code and
the first rows' ``explanation`` (a reward's own words on a sample's score)."""

from __future__ import annotations

from ..frames import format_frames, parse_location
from ..resolve import register_source
from ..scorer import Scorer
from ..spec import RewardSpec, refs_of
from .output import say
from .score_stream import Tally


def summary(scorer: Scorer, tally: Tally, output: str) -> list[str]:
    """The run's counts, rate, mean score, errors by type and what was written."""
    n = tally.scored
    elapsed, startup = tally.end - tally.start, tally.start - tally.begin
    rate = f"{n / elapsed:,.1f} samples/s" if elapsed > 0 else "n/a"
    ok = tally.statuses["ok"]
    mean = f"{tally.ok_sum / ok:.4f}" if ok else "n/a"
    errors = ", ".join(f"{t} {c}" for t, c in tally.error_types.most_common()) or "none"
    skipped = (f"; skipped {tally.skipped} (score null: reward.on_error=skip)"
               if tally.skipped else "")
    kept = f" ({tally.kept} kept from the earlier run)" if tally.kept else ""
    return [
        f"scored {n} samples with {scorer.provenance.display_name} on {where(scorer)} in "
        f"{elapsed:.2f} s ({rate}; executor start {startup:.2f} s)",
        f"  ok {ok}, failed {tally.statuses['failed']}, "
        f"timed out {tally.statuses['timeout']}{skipped}",
        f"  mean score {mean} (over ok samples)",
        f"  errors by type: {errors}",
        f"wrote {tally.written} rows to {output}{kept}",
    ]


def where(scorer: Scorer) -> str:
    """Where the samples were scored: ``the service at URL``, ``the ray executor``, ..."""
    config = scorer.config
    if config.remote_url:
        return f"the service at {config.remote_url}"
    if config.executor == "ray" and config.share_pool:
        return f"the ray executor ({config.share_pool}'s shared pool)"
    return f"the {config.executor} executor"


def all_failed(tally: Tally) -> str:
    """The error line for a run in which every sample failed."""
    top, count = tally.error_types.most_common(1)[0] if tally.error_types else ("?", 0)
    example = next(iter(tally.errors), "")
    return (f"every sample failed ({tally.scored}); most common error: {top} ({count}), "
            f"e.g. {example}")


def show_error_sources(scorer: Scorer, tally: Tally) -> None:
    """--verbose: each distinct error's frame in the reward's code, with its source line."""
    register_file_sources(scorer.ref)
    for error in tally.errors:
        say("sample_error", error)
        frame = parse_location(error)
        if frame is not None:
            for line in format_frames([frame]):
                say("line", line)


def show_explanations(tally: Tally, limit: int = 2000) -> None:
    """--verbose: the ``explanation`` a reward gave for the first rows that have one
    (code_exec: why a test did not pass), each cut to ``limit`` characters."""
    for row, text in tally.explanations:
        shown = text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
        say("line", f"row {row}: explanation:")
        for line in shown.splitlines():
            say("line", f"  {line}")


def register_file_sources(spec: RewardSpec) -> None:
    """Show each file reward's lines (its source travels in its reference) even if the file
    is gone or the reward was scored in another process."""
    for ref in refs_of(spec):
        register_source(ref)
