"""A pytest plugin for reward authors, registered as ``pytest11`` entry point.

It gives every pytest session in an environment with verl-rewards a fixture,
``verl_reward_check``, that runs exactly what ``verl-rewards check`` runs::

    def test_my_reward_passes_check(verl_reward_check):
        verl_reward_check("my_reward")      # fails the test with the report

and the same as a plain function, :func:`assert_plugin_ok`. pytest imports
this module in every session, so it imports only pytest at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .checking import CheckReport

__all__ = ["assert_plugin_ok", "verl_reward_check"]


def assert_plugin_ok(name: str) -> CheckReport:
    """Check the installed plugin ``name`` (or ``dist:name``); fail the test unless it passes.

    The plugin is imported, its shape validated and its self-test examples run,
    as by ``verl-rewards check``. Returns the report when it passed.
    """
    from .checking import check_named
    from .errors import ConfigError

    __tracebackhide__ = True
    try:
        report = check_named(name)
    except ConfigError as e:  # not installed, or ambiguous: the message lists choices
        pytest.fail(str(e), pytrace=False)
    if not report.ok:
        pytest.fail(f"verl-rewards check failed:\n{report.format()}", pytrace=False)
    return report


@pytest.fixture
def verl_reward_check() -> Callable[[str], CheckReport]:
    """A callable that checks an installed reward plugin like ``verl-rewards check``."""
    return assert_plugin_ok
