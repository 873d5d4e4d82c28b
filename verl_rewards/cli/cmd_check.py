"""``verl-rewards check [NAME ...]``: import, validate and self-test plugins."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .errors import EXIT_OK, CheckFailed
from .output import captured, emit

if TYPE_CHECKING:
    from ..checking import CheckReport
    from ..discovery import PluginRecord

NAME = "check"
HELP = "Import plugins, validate their shape and run their self-test examples."
EPILOG = """\
examples:
  verl-rewards check                 # every installed plugin
  verl-rewards check gsm8k think_answer_format
  verl-rewards check verl-rewards-math:gsm8k

Self-test examples are declared with @verl_rewards.reward(examples=[...]).
Exits 1 when any plugin fails (to import, to fit a reward shape, or an
example), naming the plugin, its distribution and the cause; 2 for an
unknown plugin name. Checking every plugin also fails a broken installed
distribution (one whose metadata cannot be read).

What a plugin prints while it loads and runs (progress bars, log lines,
warnings) is held back: shown under its report when it fails, or with -v."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this command's arguments."""
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="plugins to check (name or DIST:NAME); default: all installed")


def run(args: argparse.Namespace) -> int:
    """Check the plugins and print one report per plugin."""
    from ..checking import select_all
    from ..discovery import scan

    records, broken = scan()
    selected = select_all(args.names, records) if args.names else records
    if args.names:
        broken = []  # named plugins were found; a broken distribution is not among them
    if not selected and not broken:
        emit("no reward plugins installed; nothing to check")
        return EXIT_OK
    failed = [r.plugin.display_name for r in (_check(record, args.verbose) for record in selected)
              if not r.ok]
    for dist in broken:
        emit(f"FAIL {dist.format()}")
    summary = (f"checked {len(selected)} plugin(s): {len(selected) - len(failed)} ok, "
               f"{len(failed)} failed")
    emit("", summary + (f"; {len(broken)} broken distribution(s)" if broken else ""))
    if failed or broken:
        what = []
        if failed:
            what.append(f"{len(failed)} plugin(s) failed check: {', '.join(failed)}")
        if broken:
            what.append(f"{len(broken)} distribution(s) are broken: "
                        f"{', '.join(b.location for b in broken)}")
        raise CheckFailed("; ".join(what))
    return EXIT_OK


def _check(record: PluginRecord, verbose: bool) -> CheckReport:
    """Check one plugin with its output held back; print its report (and that output
    when it failed or ``verbose``)."""
    from ..checking import check_plugin

    with captured() as output:
        report = check_plugin(record)
    emit(report.format())
    if output.lines and (verbose or not report.ok):
        emit("     output while checking:", *(f"     | {line}" for line in output.tail()))
    return report
