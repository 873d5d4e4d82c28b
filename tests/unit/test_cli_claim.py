"""One run per output: the claim names its holder, is released with its file, and a claim
whose file was replaced under it is taken on the new file (two real opens of the file:
``flock`` locks conflict between open file descriptions, in one process too)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from verl_rewards.cli.claim import claimed, path_for
from verl_rewards.cli.errors import UsageError


def test_a_held_claim_refuses_another_naming_the_holder_and_is_gone_after(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    with claimed(output):
        holder = json.loads(path_for(output).read_text())
        assert (holder["pid"], holder["host"]) == (os.getpid(), socket.gethostname())
        with pytest.raises(UsageError, match=rf"^output file {output} is being written by another run "
                                             rf"\(pid {os.getpid()}, started \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d\): "):
            with claimed(output):
                pass
        assert not output.exists()  # the refused run made nothing
    assert sorted(tmp_path.iterdir()) == []
    with claimed(output):  # free again
        pass


def test_a_claim_file_left_by_a_dead_owner_is_taken_over(tmp_path: Path) -> None:
    output = tmp_path / "out.parquet"
    path_for(output).write_text(json.dumps({"pid": 999_999_999, "host": "gone", "started": 0}))
    with claimed(output):
        assert json.loads(path_for(output).read_text())["pid"] == os.getpid()


def test_an_owner_on_another_host_is_named_with_its_host(tmp_path: Path) -> None:
    import fcntl

    output = tmp_path / "out.jsonl"
    with path_for(output).open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write(json.dumps({"pid": 42, "host": "node-7", "started": 0}))
        held.flush()
        with pytest.raises(UsageError, match=r"another run \(pid 42 on host node-7, started "):
            with claimed(output):
                pass
