"""The CLI's own errors, and the one place that maps errors to exit codes."""

from __future__ import annotations

from typing import Final

from ..errors import ConfigError, SampleError, VerlRewardsError

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1  # a check or scoring failure
EXIT_USAGE: Final = 2  # bad arguments, input or configuration


class UsageError(VerlRewardsError):
    """The command line asks for something that cannot be done as given."""


class InputError(UsageError):
    """An input file is missing or malformed (names the file and line)."""


class OutputError(VerlRewardsError):
    """An output could not be written; what was kept, and how to continue, is in the message."""


class CheckFailed(VerlRewardsError):
    """At least one plugin failed ``check`` (the report has been printed)."""


def exit_code(error: BaseException) -> int:
    """The exit code for ``error``: 2 for bad usage, configuration or input; 1 for the rest
    (a failed check, a plugin that does not load, a reward or executor failure, a bug)."""
    return EXIT_USAGE if isinstance(error, (UsageError, ConfigError, SampleError)) else EXIT_FAILURE
