"""The `verl_reward_check` fixture in a real pytest run, as a reward author uses it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

AUTHOR_TESTS = """
def test_installed_plugin_passes(verl_reward_check):
    report = verl_reward_check("exact_match")
    assert report.examples_run == 2

def test_broken_plugin_fails_with_the_report(verl_reward_check):
    verl_reward_check("broken")
"""


def test_fixture_passes_a_good_plugin_and_fails_a_broken_one_with_its_report(broken_dist, tmp_path):
    project = tmp_path / "author"
    project.mkdir()
    (project / "test_author.py").write_text(textwrap.dedent(AUTHOR_TESTS))
    env = {**os.environ, "PYTHONPATH": str(broken_dist.parent)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "test_author.py"], cwd=project, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout
    assert ("verl-rewards check failed:\nFAIL broken (broken-rewards 0.2)\n     - cannot load "
            "reward broken (broken-rewards 0.2): importing plug_broken failed") in done.stdout
    assert "install 'numpyy_not_installed' here, or correct the name" in done.stdout


def test_the_plugin_is_light_at_import():
    code = ("import sys, verl_rewards.pytest_plugin\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('ray', 'omegaconf', 'torch')]\n"
            "assert not bad, bad\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
