"""Which file is which: an output that is the input, however it is spelt, is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verl_rewards.cli.main import main

LOCAL = ["reward.plugin=exact_match", "reward.executor=local"]


def _input(tmp_path: Path) -> Path:
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"data_source": "d", "solution_str": str(i),
                                          "ground_truth": "1"}) + "\n" for i in range(3)))
    return source


@pytest.mark.parametrize("link", [os.link, os.symlink])
@pytest.mark.parametrize("flag", ["--overwrite", "--resume"])
def test_an_output_linked_to_the_input_is_refused_and_the_input_kept(tmp_path, capsys, link, flag):
    source = _input(tmp_path)
    before = source.read_bytes()
    target = tmp_path / "out.jsonl"
    link(source, target)
    assert main(["score", "-i", str(source), "-o", str(target), flag, *LOCAL]) == 2
    assert capsys.readouterr().err == (f"verl-rewards: error: the output {target} is the input "
                                       f"{source} (the same file); write the scored rows to "
                                       "another file\n")
    assert source.read_bytes() == before


def _cli(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "verl_rewards", "score", *args, *LOCAL],
                          text=True, capture_output=False, timeout=120, **kwargs)


def test_stdout_appended_to_the_input_is_refused(tmp_path):
    source = _input(tmp_path)
    before = source.read_bytes()
    with source.open("a") as appended:
        done = _cli("-i", str(source), "-o", "-", stdout=appended, stderr=subprocess.PIPE)
    assert done.returncode == 2
    assert f"the output <stdout> is the input {source} (the same file)" in done.stderr
    assert source.read_bytes() == before


def test_stdin_read_from_the_output_is_refused(tmp_path):
    source, target = _input(tmp_path), tmp_path / "out.jsonl"
    assert main(["score", "-i", str(source), "-o", str(target), *LOCAL]) == 0
    before = target.read_bytes()
    with target.open() as stdin:
        done = _cli("-i", "-", "-o", str(target), "--resume", stdin=stdin, stderr=subprocess.PIPE)
    assert done.returncode == 2
    assert f"the output {target} is the input <stdin> (the same file)" in done.stderr
    assert target.read_bytes() == before
