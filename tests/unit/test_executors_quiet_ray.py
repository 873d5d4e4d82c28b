"""quiet_ray_startup: Ray's start-up lines hidden unless the user chose a level; no Ray imported."""

from __future__ import annotations

import os
import subprocess
import sys

_PROBE = """
import os, sys
{before}
from verl_rewards.executors.quiet_ray import quiet_ray_startup
quiet_ray_startup()
print('ray' in sys.modules, os.environ.get('RAY_LOGGER_LEVEL'))
"""


def _run(before: str = "", **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "RAY_LOGGER_LEVEL"}
    done = subprocess.run([sys.executable, "-c", _PROBE.format(before=before)], env={**clean, **env},
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_it_sets_the_error_level_without_importing_ray():
    assert _run() == "False error"


def test_a_level_the_user_set_wins():
    assert _run(RAY_LOGGER_LEVEL="info") == "False info"


def test_it_leaves_the_level_alone_once_ray_is_imported():
    # Too late to matter then: ray read the variable on import.
    assert _run(before="import ray") == "True None"
