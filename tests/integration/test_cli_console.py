"""The real `verl-rewards` console script (and `python -m verl_rewards`) in a
subprocess, as users run it: exit codes, one-line errors, real plugins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]


def _run(command: Sequence[str], *argv: str,
         python_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if python_path is not None:  # make a make_dist distribution visible to the subprocess
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(python_path), env.get("PYTHONPATH")]))
    return subprocess.run([*command, *argv], capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture(scope="module")
def run() -> Run:
    """Run the installed console script. Installing the package installs it, so
    its absence fails these tests rather than skipping them."""
    script = Path(sys.executable).with_name("verl-rewards")
    assert script.is_file(), f"console script not installed at {script}: run `pip install -e .`"

    def run(*argv: str, python_path: Path | None = None) -> subprocess.CompletedProcess[str]:
        return _run([str(script)], *argv, python_path=python_path)

    return run


def test_help_and_list(run, testkit):
    assert run("--help").returncode == 0
    done = run("list")
    assert done.returncode == 0 and done.stderr == ""
    rows = [line.split() for line in done.stdout.splitlines()]
    assert ["exact_match", testkit.name, testkit.version,
            "verl_rewards_testkit.shapes:exact_match"] in rows


def test_python_dash_m_is_the_same_cli():
    done = _run([sys.executable, "-m", "verl_rewards"], "list", "--json")
    assert done.returncode == 0
    assert "exact_match" in {p["name"] for p in json.loads(done.stdout)}


def test_show_and_check_a_real_plugin(run):
    shown = run("show", "stateful")
    assert shown.returncode == 0 and "  shape:        sample, sync class" in shown.stdout
    checked = run("check", "exact_match", "faulty")
    assert checked.returncode == 0
    assert checked.stdout.endswith("checked 2 plugin(s): 2 ok, 0 failed\n")


def test_usage_error_is_exit_2_and_one_line(run):
    done = run("show", "exact_mach")
    assert done.returncode == 2
    assert done.stderr.startswith("verl-rewards: error: no reward plugin named 'exact_mach'")
    assert done.stderr.count("\n") == 1


def test_a_broken_plugin_is_listed_and_fails_check_with_its_cause(run, broken_dist):
    site = broken_dist.parent
    listed = run("list", python_path=site)
    assert listed.returncode == 0
    assert ["broken", "broken-rewards", "0.2", "plug_broken:score"] in [
        line.split() for line in listed.stdout.splitlines()]
    checked = run("check", "exact_match", "broken", python_path=site)
    assert checked.returncode == 1
    assert ("FAIL broken (broken-rewards 0.2)\n     - cannot load reward broken (broken-rewards 0.2): "
            f"importing plug_broken failed: it imports 'numpyy_not_installed' (at {site}/plug_broken.py:1), "
            "which is not installed in this Python environment") in checked.stdout
    assert "ModuleNotFoundError: No module named 'numpyy_not_installed'\n" in checked.stdout
    assert checked.stderr == ("verl-rewards: error: 1 plugin(s) failed check: "
                              "broken (broken-rewards 0.2)\n")
    verbose = run("check", "broken", "--verbose", python_path=site)
    assert verbose.returncode == 1 and "Traceback (most recent call last)" in verbose.stderr


def test_score_a_file_and_bad_input(run, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"data_source": "d", "solution_str": "1", "ground_truth": "1"}\n')
    done = run("score", "-i", str(source), "-o", str(tmp_path / "out.jsonl"),
               "reward.plugin=exact_match", "reward.executor=local")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out.jsonl").read_text())["score"] == 1.0
    source.write_text("not json\n")
    bad = run("score", "-i", str(source), "-o", str(tmp_path / "out.jsonl"),
              "reward.plugin=exact_match", "reward.executor=local")
    assert bad.returncode == 2
    assert bad.stderr == (f"verl-rewards: error: {source}, line 1: malformed JSON: "
                          "Expecting value (column 1)\n")
