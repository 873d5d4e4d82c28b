"""``reward.remote_url`` and ``RemoteScorer`` against the real ``verl-rewards serve``: the same
sample gives the same JSON from ``score``, from the service and through ``RemoteScorer``; a
client whose section would score otherwise (another route) is refused as a config error; a
service that is not there is said at once, retried visibly, and given up within seconds."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from verl_rewards import RemoteScorer
from verl_rewards.cli.main import main
from verl_rewards.wire import dumps

CLI = str(Path(sys.executable).with_name("verl-rewards"))

REWARD = '''
import datetime
import math

import numpy as np


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return {"score": float(solution_str == ground_truth), "arr": np.array([1, 2]),
            "f32": np.float32(0.5), "i64": np.int64(7), "nan": math.nan, "raw": b"\\x00\\xff",
            "when": datetime.date(2024, 5, 1), "nested": {"t": (np.int64(3), {4})}}
'''

SECTION = """
reward:
  rewards:
    correct: {{path: {path}}}
    fmt: {{plugin: sleepy, weight: 0.5, kwargs: {{ms: 0}}}}
  route: {{"*": [{route}]}}
  executor: local
"""

ROW = {"data_source": "d", "solution_str": "42", "ground_truth": "42"}
EXTRAS = {"correct": 1.0, "correct/arr": [1, 2], "correct/f32": 0.5, "correct/i64": 7,
          "correct/nan": None, "correct/raw": "AP8=", "correct/when": "2024-05-01",
          "correct/nested": {"t": [3, [4]]}, "fmt": 1.0}


@pytest.fixture(scope="module")
def configs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The served section, and a client's that routes every sample to `correct` alone."""
    where = tmp_path_factory.mktemp("remote")
    reward = where / "numpy_reward.py"
    reward.write_text(textwrap.dedent(REWARD))
    served, other_route = where / "served.yaml", where / "other_route.yaml"
    served.write_text(SECTION.format(path=reward, route="correct, fmt"))
    other_route.write_text(SECTION.format(path=reward, route="correct"))
    return {"served": served, "other_route": other_route}


@pytest.fixture(scope="module")
def service(launch_serve: Callable[..., Any], stop_serve: Callable[..., int],
            configs: dict[str, Path]) -> Iterator[Any]:
    env = {k: v for k, v in os.environ.items() if k != "VERL_REWARDS_TOKEN"}

    def ready(server: Any) -> bool:
        try:
            with urllib.request.urlopen(server.url + "/readyz", timeout=10) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    server = launch_serve(["--dev", "-c", str(configs["served"])], env, 120.0, ready)
    try:
        yield server
    finally:
        assert stop_serve(server) == 0


def _score(tmp_path: Path, name: str, *args: str) -> tuple[int, Path]:
    source, target = tmp_path / "in.jsonl", tmp_path / f"{name}.jsonl"
    source.write_text(json.dumps(ROW) + "\n")
    return main(["score", "-i", str(source), "-o", str(target), "--no-progress", *args]), target


def test_the_same_sample_gives_the_same_json_from_score_from_serve_and_through_remote_scorer(
        service, configs, tmp_path, capsys):
    code, local = _score(tmp_path, "local", "-c", str(configs["served"]))
    assert code == 0
    code, remote = _score(tmp_path, "remote", "-c", str(configs["served"]),
                          f"reward.remote_url={service.url}")
    assert code == 0
    assert f"on the service at {service.url} in " in capsys.readouterr().out
    request = urllib.request.Request(service.url + "/v1/score", data=json.dumps({"samples": [ROW]}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        served = json.loads(response.read())
    with RemoteScorer(service.url) as scorer:
        through_client = json.loads(dumps(scorer.score([ROW]).row(0)))

    local_row, remote_row = (json.loads(path.read_text()) for path in (local, remote))
    expected = {**ROW, "score": 1.5, **EXTRAS, "error": None, "status": "ok"}
    assert local_row == expected
    assert remote_row == expected
    assert {k: v[0] for k, v in served["extra_info"].items()} == EXTRAS
    assert through_client == {"score": 1.5, "error": None, **EXTRAS}


def test_a_client_routing_otherwise_is_refused_as_a_config_error_naming_the_route(service, configs,
                                                                                    tmp_path, capsys):
    code, target = _score(tmp_path, "other", "-c", str(configs["other_route"]),
                          f"reward.remote_url={service.url}")
    error = capsys.readouterr().err
    assert code == 2 and not target.exists()
    assert error.startswith(f"verl-rewards: error: the service at {service.url} serves composite(")
    assert ("with another reward.route than this config: a score would not be the one this config "
            "asks for. Point reward.remote_url at a service of this reward section, or use the "
            f"service's section (GET {service.url}/v1/info)") in error


def test_a_client_of_another_reward_is_refused_as_a_config_error_naming_both(service, tmp_path, capsys,
                                                                             testkit):
    code, _ = _score(tmp_path, "plugin", "reward.plugin=exact_match", f"reward.remote_url={service.url}")
    error = capsys.readouterr().err
    assert code == 2
    assert "serves composite(correct=compute_score (file " in error
    assert (f"but this config asks for exact_match ({testkit.label}) (and its reward.kwargs, "
            f"reward.rewards, reward.route differ): a score would not be") in error


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_score_at_a_port_where_nothing_listens_says_each_retry_and_gives_up_within_seconds(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(ROW) + "\n")
    url = f"http://127.0.0.1:{_free_port()}"
    proc = subprocess.Popen([CLI, "score", "-i", str(source), "-o", str(tmp_path / "out.jsonl"),
                             "reward.plugin=exact_match", f"reward.remote_url={url}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        running = proc.poll() is None  # the retry was said while it retried, not at the end
        out, rest = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert first.startswith(f"verl-rewards: warning: GET {url}/healthz: ConnectionRefusedError: ")
    assert "; retrying in " in first and running
    lines = [first, *rest.splitlines()]
    assert proc.returncode == 1 and out == ""
    assert lines[-1].startswith(f"verl-rewards: error: GET {url}/healthz: no answer within 10 s (")
    assert lines[-1].endswith(f"is the service up? (GET {url}/readyz)")
    assert all(line.startswith("verl-rewards: warning: GET") for line in lines[:-1])
