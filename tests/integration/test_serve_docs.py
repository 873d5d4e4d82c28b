"""docs/serve.md's curl examples, run as written against a real `verl-rewards serve`
(gsm8k, local executor, a token), answer what the doc shows."""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "serve.md"
TOKEN = "doc-token"
# `$ curl ...'` (possibly over several lines, ending at the closing quote), then its output.
EXAMPLE = re.compile(r"^\$ (curl .*?')\n(.*?)\n```", re.S | re.M)


def examples() -> list[tuple[str, str]]:
    return EXAMPLE.findall(DOC.read_text())


def _ready(server: Any) -> bool:
    request = urllib.request.Request(server.url + "/readyz", headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=5):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def url(launch_serve: Callable[..., Any], stop_serve: Callable[..., int]) -> Iterator[str]:
    server = launch_serve(["reward.plugin=gsm8k", "reward.executor=local", "--dev"],
                          {**os.environ, "VERL_REWARDS_TOKEN": TOKEN}, 120.0, _ready)
    try:
        yield server.url
    finally:
        assert stop_serve(server, 60.0) == 0


def test_the_doc_has_its_curl_examples():
    assert len(examples()) == 4


@pytest.mark.parametrize("index", range(4))
def test_a_curl_example_answers_what_the_doc_shows(url, index):
    command, shown = examples()[index]
    command = command.replace("localhost:8000", url.removeprefix("http://"))
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "VERL_REWARDS_TOKEN": TOKEN})
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    if "{...}" in shown:  # the doc abbreviates the echoed request: compare what it shows
        pattern = ".*?".join(re.escape(part) for part in shown.split("{...}"))
        assert re.fullmatch(pattern, json.dumps(got), re.S), (shown, done.stdout)
    else:
        assert got == json.loads(shown)
