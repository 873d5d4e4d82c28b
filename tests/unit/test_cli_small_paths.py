"""The small newcomer paths: no command lists the commands, list's notes stand apart,
Ray's start-up lines are hushed, the README's file-reward command names a real file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from verl_rewards.cli.main import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]


def test_no_command_prints_the_commands_and_exits_2(capsys):
    assert main([]) == 2
    err = capsys.readouterr().err
    for module in COMMANDS:
        assert re.search(rf"^    {module.NAME} +\S", err, re.MULTILINE), module.NAME


def test_list_puts_a_blank_line_between_its_table_and_an_ambiguity_note(make_dist, capsys):
    make_dist("twin-a", "1.0", {"twin_reward": "twin_a:f"}, {"twin_a.py": "def f(): pass\n"})
    make_dist("twin-b", "1.0", {"twin_reward": "twin_b:f"}, {"twin_b.py": "def f(): pass\n"})
    assert main(["list"]) == 0
    captured = capsys.readouterr()
    assert captured.out.endswith("\n")
    assert captured.err.startswith("\nnote: 'twin_reward' is declared by 2 distributions; "
                                   "select one as twin-a:twin_reward, twin-b:twin_reward")


CONSOLE = """
import atexit, os, sys
from verl_rewards.cli.main import console_main
atexit.register(lambda: print("RAY_LOGGER_LEVEL", os.environ.get("RAY_LOGGER_LEVEL")))
console_main()
"""


def _ray_logger_level(*argv: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "RAY_LOGGER_LEVEL"}
    done = subprocess.run([sys.executable, "-c", CONSOLE, *argv], capture_output=True,
                          text=True, timeout=60, env={**clean, **env})
    return done.stdout.splitlines()[-1].split()[-1]


def test_ray_start_up_lines_are_hushed_unless_verbose_or_chosen():
    # ray.init takes its log level from RAY_LOGGER_LEVEL, read when ray is imported.
    assert _ray_logger_level("list") == "error"
    assert _ray_logger_level("-v", "list") == "None"
    assert _ray_logger_level("list", RAY_LOGGER_LEVEL="debug") == "debug"


def test_the_readme_file_reward_command_names_a_file_that_exists():
    readme = (ROOT / "README.md").read_text()
    paths = re.findall(r"reward\.path=(\S+?\.py)", readme)
    assert paths
    for path in paths:
        assert (ROOT / path).is_file(), path


def test_the_reward_curve_band_stays_within_the_steps_min_and_max():
    from trainer.metrics import _band

    assert _band({"reward_mean": 0.95, "reward_std": 0.1, "reward_min": 0.8,
                  "reward_max": 1.0}) == (0.85, 1.0)
    assert _band({"reward_mean": 0.5, "reward_std": 0.2}) == (0.3, 0.7)
