"""``verl-rewards new NAME [DIR]``: scaffold a reward plugin package."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .errors import EXIT_OK
from .output import emit, say

NAME = "new"
HELP = "Scaffold a reward plugin package that installs and passes `check` as generated."
EPILOG = """\
examples:
  verl-rewards new my_reward                 # creates ./my_reward
  verl-rewards new my_reward plugins/mine    # creates plugins/mine
  python -m pip install -e './my_reward[test]' && verl-rewards check my_reward

NAME becomes the entry-point name (reward.plugin=NAME), the distribution
(dashes) and the import package (underscores). DIR must not exist or be empty.
The next steps it prints use this environment's Python and scripts (the
environment verl-rewards runs in), so they work as printed without activating it."""


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
        say("note", f"a plugin named {names.plugin!r} is already installed: {', '.join(taken)}; "
                    f"with both installed, select one as DIST:{names.plugin} "
                    f"(e.g. reward.plugin={names.dist}:{names.plugin})")
    directory: Path = args.directory or Path(args.name)
    written = scaffold.write(directory, scaffold.render(names, _requirement()))
    emit(f"created plugin package {names.dist} in {directory}",
         *(f"  {p.relative_to(directory).as_posix()}" for p in written),
         f"entry point: {names.plugin} = \"{names.package}.reward:compute_score\" "
         f"(group verl_rewards)",
         *next_steps(directory, names.plugin))
    return EXIT_OK


def next_steps(directory: Path, plugin: str) -> list[str]:
    """What to run next, with this environment's interpreter and scripts (bare ``pip``
    or ``python`` may be another environment's)."""
    import importlib.util
    import shlex
    import sys

    python = shlex.quote(_short(Path(sys.executable)))
    script = Path(sys.executable).parent / "verl-rewards"
    verl_rewards = shlex.quote(_short(script)) if script.is_file() else f"{python} -m verl_rewards"
    where = directory.as_posix()
    if not directory.is_absolute() and not where.startswith(("./", "../")):
        where = f"./{where}"
    pip = f"{python} -m pip" if importlib.util.find_spec("pip") else f"pip --python {python}"
    return ["next (with this environment's Python; or activate it and drop the path):",
            f"  {pip} install -e {shlex.quote(where + '[test]')}",
            f"  {verl_rewards} check {plugin}",
            f"  {python} -m pytest {shlex.quote((directory / 'tests').as_posix())}"]


def _short(path: Path) -> str:
    """``path`` relative to the working directory when it is under it, else absolute;
    always with a ``/`` so that a shell runs that file, not a namesake on ``PATH``."""
    absolute = Path(os.path.abspath(path))  # not resolved: a venv's python is a symlink
    try:
        relative = absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.as_posix()
    return relative if "/" in relative else f"./{relative}"


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
