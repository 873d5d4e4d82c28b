"""``verl-rewards``: find, inspect, check, run and scaffold reward plugins.

Parses arguments, runs one subcommand, and turns any error into one line on
stderr and an exit code (:func:`.errors.exit_code`). Subcommand modules import
the library lazily, so ``verl-rewards list`` loads no more than discovery.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from . import cmd_audit, cmd_check, cmd_list, cmd_new, cmd_score, cmd_serve, cmd_show
from .errors import EXIT_FAILURE, EXIT_USAGE, exit_code
from .output import PROG, emit, flush_all, say

COMMANDS: tuple[ModuleType, ...] = (cmd_list, cmd_show, cmd_check, cmd_score, cmd_new, cmd_audit, cmd_serve)
_NAMES = frozenset(module.NAME for module in COMMANDS)
_NO_LIBRARY = frozenset({cmd_list.NAME, cmd_new.NAME})  # commands that score nothing, so log nothing

EPILOG = """\
examples:
  verl-rewards list
  verl-rewards show gsm8k
  verl-rewards check
  verl-rewards score --input samples.jsonl --output scored.jsonl \\
      reward.plugin=gsm8k reward.executor=local
  verl-rewards new my_reward
  verl-rewards audit gsm8k
  verl-rewards serve reward.plugin=gsm8k

exit codes: 0 ok, 1 a check or scoring failure, 2 a usage, input or config error.
Run `verl-rewards COMMAND --help` for a command's options and examples."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:  # no command: say which there are, not just that one is required
        say("line", build_parser().format_help().rstrip("\n"))
        return EXIT_USAGE
    # Building every subparser costs about as much as `list`'s own work: when
    # the command is the first argument, build only that one.
    parser = build_parser(argv[0] if argv and argv[0] in _NAMES else None)
    try:
        args = _parse(parser, argv)
    except SystemExit as e:  # argparse exits for --help (0) and usage errors (2)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    return _run(args)


def console_main() -> NoReturn:
    """Entry point of the ``verl-rewards`` console script and ``python -m verl_rewards``."""
    argv = sys.argv[1:]
    if not {"-v", "--verbose"} & set(argv):
        from ..executors.quiet_ray import quiet_ray_startup

        quiet_ray_startup()
    if not _NO_LIBRARY & set(argv[:1]):  # `list` stays as cheap as a bare entry-point scan
        from .output import show_library_logs

        show_library_logs()
    code = main(argv)
    _exit_despite_stray_threads(code)
    raise SystemExit(code)


def _exit_despite_stray_threads(code: int) -> None:
    """Exit now if a reward left non-daemon threads running (the interpreter would wait forever).

    The work is done and written; exit hooks (Ray's shutdown among them) still run.
    """
    import threading

    stray = [t for t in threading.enumerate()
             if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if not stray:
        return
    import atexit
    import os

    names = ", ".join(sorted(t.name for t in stray))
    say("warning", f"exiting with {len(stray)} thread(s) still running, started by the reward "
                   f"and never ended: {names}")
    atexit._run_exitfuncs()
    flush_all()
    os._exit(code)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser, one subparser per command module (or just ``only``'s)."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Find, inspect, check, run and scaffold reward plugins.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="show tracebacks of errors")
    # Also accept --verbose after the command; SUPPRESS keeps the global value.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show tracebacks of errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        if only is not None and module.NAME != only:
            continue
        sub = subparsers.add_parser(
            module.NAME, help=module.HELP, description=module.HELP, epilog=module.EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter, parents=[common],
        )
        module.configure(sub)
        sub.set_defaults(run=module.run)
    return parser


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    args, extra = parser.parse_known_args(argv)
    # argparse takes a positional list only once: `KEY=VALUE` overrides placed
    # after an option (`score -i a -o b --batch-size 8 reward.plugin=x`) come back
    # unrecognised; they belong to the command's overrides, in order.
    overrides = getattr(args, "overrides", None)
    if extra and overrides is not None and all("=" in e and not e.startswith("-") for e in extra):
        args.overrides = [*overrides, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}{_override_hint(argv or [], overrides)}")
    return args


def _override_hint(argv: Sequence[str], overrides: list[str] | None) -> str:
    """``--plugin gsm8k`` for ``reward.plugin=gsm8k``: say so, for a command that takes overrides."""
    if overrides is None:
        return ""
    import dataclasses

    from ..config import RewardConfig

    keys = {f.name for f in dataclasses.fields(RewardConfig)}
    hints = []
    for i, arg in enumerate(argv):
        key, equals, value = arg.lstrip("-").replace("-", "_").partition("=")
        if not arg.startswith("--") or key not in keys:
            continue
        if not equals:
            value = argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("-") else "VALUE"
        hints.append(f"reward.{key}={value}")
    return f"; reward options are overrides, not flags: {' '.join(hints)}" if hints else ""


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    except BrokenPipeError:  # `verl-rewards list | head`: stop quietly
        _silence_stdout()
        return EXIT_FAILURE
    except Exception as e:  # noqa: BLE001 - the one place errors become exit codes
        return _report(e, verbose=args.verbose)


def _report(error: Exception, verbose: bool) -> int:
    from ..errors import VerlRewardsError

    if verbose:
        import traceback

        from ..frames import format_frames, parse_location

        say("line", "".join(traceback.format_exception(error)).rstrip("\n"))
        frame = parse_location(str(error))
        if frame is not None:  # the reward's own line, which ran in another frame or process
            say("line", "\n".join(["in the reward's code:", *format_frames([frame])]))
    message = " ".join(str(error).split())  # one line, even for a YAML parser's message
    if isinstance(error, VerlRewardsError):
        say("error", message)
    else:
        hint = "" if verbose else " (run with --verbose for the traceback)"
        say("error", f"{type(error).__name__}: {message}{hint}")
    return exit_code(error)


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (captured)
        pass


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked (a metadata lookup costs a scan)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> NoReturn:
        from .. import __version__

        emit(f"{PROG} {__version__}")
        parser.exit()
