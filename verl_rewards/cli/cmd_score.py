"""``verl-rewards score``: score a JSONL or Parquet file of samples.

The command: arguments, the reward config, the summary. The loop lives in
:mod:`.score_stream`, rows by format in :mod:`.rowio`. This module is imported
by every ``verl-rewards`` command, so the library is imported only in :func:`run`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .argtypes import column_map, positive_int
from .errors import EXIT_FAILURE, EXIT_OK, UsageError
from .output import emit, say
from .reward_section import scorer_from_args as _scorer
from .rowbase import WriteMode, format_of, is_stdio, label, output_is_input
from .rows_stdio import claim_stdout

if TYPE_CHECKING:
    from .score_stream import Plan

NAME = "score"
HELP = "Score a JSONL or Parquet file of samples with the reward a config selects."
EPILOG = """\
examples:
  verl-rewards score --input samples.jsonl --output scored.jsonl \\
      reward.plugin=gsm8k reward.executor=local
  verl-rewards score -i samples.parquet -o scored.parquet --config trainer.yaml \\
      reward.num_workers=4 reward.timeout_s=10
  cat samples.jsonl | verl-rewards score -i - -o - reward.plugin=copy_digits > scored.jsonl
  verl-rewards score -i big.jsonl -o scored.jsonl --resume reward.plugin=gsm8k
  verl-rewards score -i qa.jsonl -o scored.jsonl \
      --columns solution_str=response,ground_truth=answer reward.plugin=gsm8k

Each input row needs data_source, solution_str and ground_truth (extra_info
and prompt optional), or the columns --columns names for them. Two runs never
write one output at once: the second is refused, naming the first. Each output row is the input row plus `score`, the
reward's extra keys, `error` (null when it scored) and `status` (ok, failed,
timeout); with reward.on_error=skip a failed sample's score is null. Rows are
written in input order as each batch finishes, so memory stays bounded and an
interrupted run (even a killed one) leaves whole rows that --resume continues,
once it has checked that the input, reward and config are the same. An
existing output is refused unless --overwrite or --resume is given; an empty
input unless --allow-empty. Overrides are the trainer's `reward.*` keys;
--config takes a trainer config with a `reward:` section, or a bare one. The
executor is reward.executor (default ray). Exits 2 on bad input or config
(found before scoring starts), 1 when every sample failed or a sample fails
with reward.on_error=raise."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this command's arguments."""
    parser.add_argument("-i", "--input", required=True, type=Path, metavar="FILE",
                        help="samples: .jsonl or .parquet, or - for JSONL on stdin")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE",
                        help="where to write scored rows: .jsonl or .parquet, or - for JSONL "
                             "on stdout")
    parser.add_argument("-c", "--config", type=Path, metavar="FILE.yaml",
                        help="YAML config: a trainer config with a `reward:` section, or a bare one")
    existing = parser.add_mutually_exclusive_group()
    existing.add_argument("--resume", action="store_true",
                          help="continue an interrupted run: keep the rows OUTPUT holds and score "
                               "the rest of the input (the same input, reward and config)")
    existing.add_argument("--overwrite", action="store_true",
                          help="replace an existing OUTPUT (without it, an existing output is "
                               "refused)")
    parser.add_argument("--allow-empty", action="store_true",
                        help="an input without rows writes an empty output (without it, exit 2)")
    parser.add_argument("--batch-size", type=positive_int, metavar="N",
                        help="samples per scoring call; rows are written as each call returns "
                             "(default: about 1%% of the input, 64 to 2048; 256 on stdin)")
    parser.add_argument("--columns", type=column_map, default={}, metavar="FIELD=COLUMN,...",
                        help="input columns under other names, e.g. "
                             "solution_str=response,ground_truth=answer (the output keeps them)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (it is only drawn on a terminal anyway)")
    parser.add_argument("overrides", nargs="*", metavar="reward.KEY=VALUE",
                        help="config overrides, e.g. reward.plugin=gsm8k reward.executor=local")


def run(args: argparse.Namespace) -> int:
    """Check the paths, claim stdout for rows (before a reward can print at import), build
    the scorer, stream, summarise."""
    from ..errors import RewardError
    from . import score_report, score_stream

    plan = _plan(args)
    verbose = getattr(args, "verbose", False)
    with claim_stdout(is_stdio(plan.target)):
        scorer = _scorer(args.config, args.overrides)
        try:
            tally = score_stream.run(scorer, plan)
        except RewardError:
            score_report.register_file_sources(scorer.ref)  # for --verbose's source line
            raise
        _say(plan, *score_report.summary(scorer, tally, label(plan.target, "output")))
        if verbose:
            score_report.show_error_sources(scorer, tally)
            score_report.show_explanations(tally)
        if tally.all_failed:
            say("error", score_report.all_failed(tally))
            return EXIT_FAILURE
    return EXIT_OK


def _plan(args: argparse.Namespace) -> Plan:
    """The paths and flags, checked before anything is read or written."""
    from .score_stream import Plan

    format_of(args.input, "input")
    format_of(args.output, "output")  # fail on a bad extension before any work
    if output_is_input(args.input, args.output):
        raise UsageError(f"the output {label(args.output, 'output')} is the input "
                         f"{label(args.input, 'input')} (the same file); write the scored rows "
                         f"to another file")
    mode: WriteMode = "resume" if args.resume else "overwrite" if args.overwrite else "new"
    return Plan(args.input, args.output, mode, args.batch_size, args.allow_empty,
                not args.no_progress, args.columns)


def _say(plan: Plan, *lines: str) -> None:
    """The summary goes to stdout, unless the scored rows do."""
    if is_stdio(plan.target):
        for line in lines:
            say("line", line)
    else:
        emit(*lines)
