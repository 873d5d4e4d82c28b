"""The CLI's own errors, and the one place that maps errors to exit codes."""

from __future__ import annotations

from typing import Final

from ..errors import (
    ConfigError,
    ExecutorError,
    PluginLoadError,
    RewardError,
    RewardValueError,
    SampleError,
    VerlRewardsError,
)

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1  # a check or scoring failure
EXIT_USAGE: Final = 2  # bad arguments, input or configuration


class UsageError(VerlRewardsError):
    """The command line asks for something that cannot be done as given."""


class InputError(UsageError):
    """An input file is missing or malformed (names the file and line)."""


class CheckFailed(VerlRewardsError):
    """At least one plugin failed ``check`` (the report has been printed)."""


# Most specific first: the first class an error is an instance of wins.
_EXIT_CODES: Final[tuple[tuple[type[BaseException], int], ...]] = (
    (UsageError, EXIT_USAGE),
    (ConfigError, EXIT_USAGE),
    (SampleError, EXIT_USAGE),
    (CheckFailed, EXIT_FAILURE),
    (PluginLoadError, EXIT_FAILURE),
    (RewardError, EXIT_FAILURE),
    (RewardValueError, EXIT_FAILURE),
    (ExecutorError, EXIT_FAILURE),
    (VerlRewardsError, EXIT_FAILURE),
)


def exit_code(error: BaseException) -> int:
    """The exit code for ``error``: 2 for usage/config/input, 1 for failures."""
    for cls, code in _EXIT_CODES:
        if isinstance(error, cls):
            return code
    return EXIT_FAILURE
