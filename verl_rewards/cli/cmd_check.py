"""``verl-rewards check [NAME ...]``: import, validate and self-test plugins."""

from __future__ import annotations

import argparse

from .errors import EXIT_OK, CheckFailed
from .output import emit

NAME = "check"
HELP = "Import plugins, validate their shape and run their self-test examples."
EPILOG = """\
examples:
  verl-rewards check                 # every installed plugin
  verl-rewards check exact_match batch_exact
  verl-rewards check my-dist:my_reward

Self-test examples are declared with @verl_rewards.reward(examples=[...]).
Exits 1 when any plugin fails (to import, to fit a reward shape, or an
example), naming the plugin, its distribution and the cause; 2 for an
unknown plugin name."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this command's arguments."""
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="plugins to check (name or DIST:NAME); default: all installed")


def run(args: argparse.Namespace) -> int:
    """Check the plugins and print one report per plugin."""
    from ..checking import check_plugins

    reports = check_plugins(args.names)
    if not reports:
        emit("no reward plugins installed; nothing to check")
        return EXIT_OK
    for report in reports:
        emit(report.format())
    failed = [r for r in reports if not r.ok]
    emit("", f"checked {len(reports)} plugin(s): {len(reports) - len(failed)} ok, "
             f"{len(failed)} failed")
    if failed:
        names = ", ".join(r.plugin.display_name for r in failed)
        raise CheckFailed(f"{len(failed)} plugin(s) failed check: {names}")
    return EXIT_OK
