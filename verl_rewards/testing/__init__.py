"""Tools for plugin authors' test suites.

:mod:`verl_rewards.testing.conformance` runs one plugin through every installed
trainer's adapter and checks that they agree (``assert_conformant``).
"""

from __future__ import annotations
