"""``verl-rewards new NAME [DIR]``: scaffold a reward plugin package."""

from __future__ import annotations

import argparse
from pathlib import Path

from .errors import EXIT_OK
from .output import emit, note

NAME = "new"
HELP = "Scaffold a reward plugin package that installs and passes `check` as generated."
EPILOG = """\
examples:
  verl-rewards new my_reward                 # creates ./my_reward
  verl-rewards new my_reward plugins/mine    # creates plugins/mine
  pip install -e ./my_reward && verl-rewards check my_reward

NAME becomes the entry-point name (reward.plugin=NAME), the distribution
(dashes) and the import package (underscores). DIR must not exist or be empty."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this command's arguments."""
    parser.add_argument("name", metavar="NAME", help="plugin name, e.g. my_reward")
    parser.add_argument("directory", metavar="DIR", nargs="?", type=Path,
                        help="where to create the package (default: ./NAME)")


def run(args: argparse.Namespace) -> int:
    """Write the package and say what to do next."""
    from . import scaffold

    names = scaffold.names_for(args.name)
    taken = scaffold.taken_by(names.plugin)
    if taken:
        note(f"a plugin named {names.plugin!r} is already installed: {', '.join(taken)}; "
             f"with both installed, select one as DIST:{names.plugin} "
             f"(e.g. reward.plugin={names.dist}:{names.plugin})")
    directory: Path = args.directory or Path(args.name)
    written = scaffold.write(directory, scaffold.render(names, _requirement()))
    emit(f"created plugin package {names.dist} in {directory}",
         *(f"  {p.relative_to(directory).as_posix()}" for p in written),
         f"entry point: {names.plugin} = \"{names.package}.reward:compute_score\" "
         f"(group verl_rewards)",
         "next:",
         f"  pip install -e {directory}",
         f"  verl-rewards check {names.plugin}",
         f"  python -m pytest {directory / 'tests'}")
    return EXIT_OK


def _requirement() -> str:
    """``verl-rewards>=X.Y`` for the running release (unpinned from a source tree)."""
    from .. import __version__

    try:
        major, minor = __version__.split(".")[:2]
    except ValueError:  # "0+unknown" from a source tree
        return "verl-rewards"
    if not (major.isdigit() and minor.isdigit()):
        return "verl-rewards"
    return f"verl-rewards>={major}.{minor}"
