"""The real `verl-rewards` console script (and `python -m verl_rewards`) in a
subprocess, as users run it: exit codes, one-line errors, real plugins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("verl-rewards")

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="console script not installed")


def _run(*argv: str, python_path: Path | None = None, cwd: Path | None = None,
         module: bool = False) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if python_path is not None:  # make a make_dist distribution visible to the subprocess
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(python_path), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "verl_rewards"] if module else [str(SCRIPT)]
    return subprocess.run([*command, *argv], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120)


def test_help_and_list():
    assert _run("--help").returncode == 0
    done = _run("list")
    assert done.returncode == 0 and done.stderr == ""
    rows = [line.split() for line in done.stdout.splitlines()]
    assert ["exact_match", "verl-rewards-testkit", "0.3.1",
            "verl_rewards_testkit.shapes:exact_match"] in rows


def test_python_dash_m_is_the_same_cli():
    done = _run("list", "--json", module=True)
    assert done.returncode == 0
    assert "exact_match" in {p["name"] for p in json.loads(done.stdout)}


def test_show_and_check_a_real_plugin():
    shown = _run("show", "stateful")
    assert shown.returncode == 0 and "  shape:        sample, sync class" in shown.stdout
    checked = _run("check", "exact_match", "faulty")
    assert checked.returncode == 0
    assert checked.stdout.endswith("checked 2 plugin(s): 2 ok, 0 failed\n")


def test_usage_error_is_exit_2_and_one_line(tmp_path):
    done = _run("show", "exact_mach")
    assert done.returncode == 2
    assert done.stderr.startswith("verl-rewards: error: no reward plugin named 'exact_mach'")
    assert done.stderr.count("\n") == 1


def test_a_broken_plugin_is_listed_and_fails_check_with_its_cause(make_dist, tmp_path):
    info = make_dist("broken-rewards", "0.2", "[verl_rewards]\nbroken = plug_broken:score\n",
                     {"plug_broken.py": "import numpyy_not_installed\n"})
    site = info.parent
    listed = _run("list", python_path=site)
    assert listed.returncode == 0
    assert ["broken", "broken-rewards", "0.2", "plug_broken:score"] in [
        line.split() for line in listed.stdout.splitlines()]
    checked = _run("check", "exact_match", "broken", python_path=site)
    assert checked.returncode == 1
    assert ("FAIL broken (broken-rewards 0.2)\n     - cannot load reward broken (broken-rewards 0.2): "
            "importing plug_broken failed: ModuleNotFoundError: No module named "
            "'numpyy_not_installed'\n") in checked.stdout
    assert checked.stderr == ("verl-rewards: error: 1 plugin(s) failed check: "
                              "broken (broken-rewards 0.2)\n")
    verbose = _run("check", "broken", "--verbose", python_path=site)
    assert verbose.returncode == 1 and "Traceback (most recent call last)" in verbose.stderr


def test_score_a_file_and_bad_input(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"data_source": "d", "solution_str": "1", "ground_truth": "1"}\n')
    done = _run("score", "-i", str(source), "-o", str(tmp_path / "out.jsonl"),
                "reward.plugin=exact_match", "reward.executor=local")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out.jsonl").read_text())["score"] == 1.0
    source.write_text("not json\n")
    bad = _run("score", "-i", str(source), "-o", str(tmp_path / "out.jsonl"),
               "reward.plugin=exact_match", "reward.executor=local")
    assert bad.returncode == 2
    assert bad.stderr == (f"verl-rewards: error: {source}, line 1: malformed JSON: "
                          "Expecting value (column 1)\n")


def test_list_imports_neither_plugins_nor_heavy_libraries():
    code = ("import runpy, sys; sys.argv = ['verl-rewards', 'list']\n"
            "try:\n    runpy.run_module('verl_rewards', run_name='__main__')\n"
            "except SystemExit as e:\n    assert e.code == 0\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('ray', 'torch', 'omegaconf', 'verl_rewards_testkit')]\n"
            "assert not bad, bad\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
