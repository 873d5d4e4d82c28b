"""Which cluster a bare start joins: the address `ray start` recorded in Ray's
``ray_current_cluster`` only when something answers there (issue 26, item 19). The file
is written under a private RAY_TMPDIR, never Ray's real /tmp/ray."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from verl_rewards.executors import ray_session


@pytest.fixture
def ray_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where Ray looks for ``ray_current_cluster`` in this test: RAY_TMPDIR/ray."""
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    (tmp_path / "ray").mkdir()
    return tmp_path / "ray"


@pytest.fixture
def listener() -> Iterator[str]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"127.0.0.1:{server.getsockname()[1]}"


def _dead_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def test_no_recorded_cluster_starts_a_local_session(ray_root):
    assert ray_session._recorded_cluster() is None


def test_a_recorded_cluster_that_answers_is_joined(ray_root, listener):
    (ray_root / "ray_current_cluster").write_text(listener + "\n")
    assert ray_session._recorded_cluster() == listener


def test_a_stale_recorded_cluster_is_reported_and_ignored(ray_root, caplog):
    address = _dead_address()
    (ray_root / "ray_current_cluster").write_text(address)
    with caplog.at_level(logging.WARNING, "verl_rewards"):
        assert ray_session._recorded_cluster() is None
    (message,) = [r.getMessage() for r in caplog.records]
    assert message == (
        f"ignoring {ray_root}/ray_current_cluster: nothing answers at {address}, the address it "
        "records (ConnectionRefusedError: [Errno 111] Connection refused), so the cluster started "
        "there with `ray start` has ended without `ray stop`. Starting a local Ray session instead; "
        "`ray stop` (or deleting the file) forgets it, reward.ray_address or RAY_ADDRESS joins a "
        "cluster")
