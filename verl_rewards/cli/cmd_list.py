"""``verl-rewards list``: installed plugins, from metadata alone (imports none)."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import TYPE_CHECKING

from .errors import EXIT_OK
from .output import emit, say, table

if TYPE_CHECKING:
    from ..discovery import PluginRecord

NAME = "list"
HELP = "List installed reward plugins (reads metadata only: imports no plugin)."
EPILOG = """\
examples:
  verl-rewards list
  verl-rewards list --json | python -c "import json,sys; print(len(json.load(sys.stdin)))"

A plugin is an entry point in group 'verl_rewards'. A plugin that fails to
import is listed too; `verl-rewards check NAME` says why it fails. A
distribution whose metadata cannot be read (say, an interrupted install) is
named on stderr as broken; the others are listed as usual."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this command's arguments."""
    parser.add_argument("--json", action="store_true",
                        help="print a JSON list of {name, distribution, version, target, "
                             "qualified_name}")


def run(args: argparse.Namespace) -> int:
    """List every installed plugin, sorted by name then distribution."""
    from ..discovery import scan

    records, broken = scan()
    for dist in broken:
        say("note", dist.format())
    if args.json:
        import json

        emit(json.dumps([_as_json(r) for r in records], indent=2))
        return EXIT_OK
    if not records:
        emit("no reward plugins installed (entry-point group 'verl_rewards'); "
             "scaffold one with `verl-rewards new NAME`")
        return EXIT_OK
    emit(*table(("NAME", "DISTRIBUTION", "VERSION", "TARGET"),
                [(r.name, r.dist, r.version, r.target) for r in records]))
    ambiguous = [(n, c) for n, c in sorted(Counter(r.name for r in records).items()) if c > 1]
    if ambiguous:
        say("line")  # a blank line between the table and the notes
    for name, count in ambiguous:
        choices = ", ".join(r.qualified_name for r in records if r.name == name)
        say("note", f"'{name}' is declared by {count} distributions; select one as {choices}")
    return EXIT_OK


def _as_json(record: PluginRecord) -> dict[str, str]:
    return {"name": record.name, "distribution": record.dist, "version": record.version,
            "target": record.target, "qualified_name": record.qualified_name}
