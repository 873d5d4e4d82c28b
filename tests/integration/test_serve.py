"""``verl-rewards serve`` as a user runs it (the console script in a subprocess, local
executor): auth, every protocol, bad requests, limits, combined batches, a full queue,
SIGTERM with a request in flight, a refused public bind, OpenRLHF 0.11.2's own HTTP
client and RemoteScorer."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from verl_rewards import RemoteScorer
from verl_rewards.remote import RemoteError

CLI = str(Path(sys.executable).with_name("verl-rewards"))
TOKEN = "s3cret-token"
ROW = {"data_source": "d", "solution_str": " 42 ", "ground_truth": "42"}


Server = Any  # conftest's ServeProcess(proc, url, lines)


@pytest.fixture(scope="module")
def start(launch_serve: Callable[..., Server]) -> Callable[..., Server]:
    """Start `verl-rewards serve --port 0 ARGS` and wait until it is ready."""

    def start(*args: str, token: str | None = None, timeout_s: float = 120.0) -> Server:
        env = {k: v for k, v in os.environ.items() if k != "VERL_REWARDS_TOKEN"}
        if token is not None:
            env["VERL_REWARDS_TOKEN"] = token
        return launch_serve(args, env, timeout_s,
                            lambda server: call(server, "GET", "/readyz", token=token)[0] == 200)

    return start


def call(server: Server, method: str, path: str, body: Any = None, token: str | None = TOKEN,
         raw: bytes | None = None, headers: dict[str, str] | None = None,
         timeout_s: float = 120.0) -> tuple[int, dict[str, str], Any]:
    """One request; (status, headers, JSON body or text)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if token is not None:
        all_headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(server.url + path, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            status, got, text = response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as e:
        status, got, text = e.code, dict(e.headers), e.read().decode()
    try:
        return status, got, json.loads(text)
    except ValueError:
        return status, got, text


@pytest.fixture(scope="module")
def server(start: Callable[..., Server], stop_serve: Callable[..., int]) -> Iterator[Server]:
    """exact_match on the local executor, with a token; its log never shows a traceback."""
    running = start("reward.plugin=exact_match", "reward.executor=local", "--dev", "--max-samples", "64",
                    "--max-body-mb", "0.01", "--max-queue-mb", "1", token=TOKEN)
    try:
        yield running
    finally:
        assert stop_serve(running) == 0
        assert "Traceback" not in "".join(running.lines)


# -- auth ----------------------------------------------------------------------


def test_healthz_is_open_without_the_token(server):
    assert call(server, "GET", "/healthz", token=None)[:3:2] == (200, {"status": "ok"})


@pytest.mark.parametrize("path", ["/readyz", "/metrics", "/v1/info"])
def test_every_other_endpoint_needs_the_token(server, path):
    status, headers, body = call(server, "GET", path, token=None)
    assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
    assert "Authorization: Bearer TOKEN" in body["error"]


def test_a_wrong_token_is_refused(server):
    status, _, body = call(server, "POST", "/v1/score", {"samples": [ROW]}, token="s3cret-tokeN")
    assert status == 401 and "wrong token" in body["error"]


def test_the_token_in_the_header_or_the_query_is_accepted(server):
    assert call(server, "POST", "/v1/score", {"samples": [ROW]})[0] == 200
    status, _, body = call(server, "POST", f"/v1/score?token={TOKEN}", {"samples": [ROW]}, token=None)
    assert status == 200 and body["scores"] == [1.0]


# -- protocols -------------------------------------------------------------------


def test_native_protocol_answers_every_sample_in_order(server):
    rows = [ROW, {**ROW, "solution_str": "41"}, {**ROW, "extra_info": {"k": 1}, "prompt": "q?"}]
    status, _, body = call(server, "POST", "/v1/score", {"samples": rows})
    assert status == 200
    assert body["scores"] == [1.0, 0.0, 1.0] and body["statuses"] == ["ok"] * 3
    assert body["errors"] == [None] * 3 and len(body["extra_info"]["pid"]) == 3
    assert body["provenance"]["name"] == "exact_match"
    assert body["provenance"]["dist"] == "verl-rewards-testkit"


def test_openrlhf_protocol_scores_only_the_response(server):
    payload = {"query": ["<|im_start|>user\nSay 42<|im_end|>\n<|im_start|>assistant\n42<|im_end|>"],
               "prompts": ["<|im_start|>user\nSay 42<|im_end|>\n<|im_start|>assistant\n"],
               "labels": ["42"]}
    status, _, body = call(server, "POST", "/openrlhf", payload)
    assert (status, body) == (200, {"rewards": [1.0], "scores": [1.0],
                                    "extra_logs": {"reward_failed": [0.0]}})


def test_slime_protocol_answers_a_json_number(server):
    status, _, body = call(server, "POST", "/slime", {"prompt": "Say 42", "response": "42",
                                                      "label": "42"})
    assert (status, body) == (200, 1.0)


def test_nemo_gym_verify_echoes_the_request_with_its_reward(server):
    request = {"responses_create_params": {"input": [{"role": "user", "content": "Say 42"}]},
               "response": {"output": [{"type": "message", "role": "assistant",
                                        "content": [{"type": "output_text", "text": "42"}]}]},
               "expected_answer": "42"}
    status, _, body = call(server, "POST", "/nemo_gym/verify", request)
    assert status == 200 and body["reward"] == 1.0
    assert {k: body[k] for k in request} == request
    assert call(server, "POST", "/seed_session", {})[:3:2] == (200, {})
    assert call(server, "POST", "/seed_session", raw=b"")[:3:2] == (200, {})
    status, _, body = call(server, "POST", "/seed_session", raw=b"[1]")
    assert (status, body["error"]) == (400, "the /seed_session body must be a JSON object, not an array")


def test_metrics_count_requests_samples_and_batches(server):
    call(server, "POST", "/v1/score", {"samples": [ROW, ROW]})
    status, headers, text = call(server, "GET", "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    for name in ('verl_rewards_requests_total{code="200",endpoint="/v1/score"}',
                 'verl_rewards_samples_total{status="ok"}', "verl_rewards_queue_depth",
                 "verl_rewards_batch_samples_count", 'verl_rewards_request_latency_seconds_bucket',
                 "verl_rewards_pool_ready 1.0"):
        assert name in text


# -- bad requests -----------------------------------------------------------------


def test_invalid_json_is_400_saying_so(server):
    status, _, body = call(server, "POST", "/v1/score", raw=b'{"samples": [')
    assert status == 400 and body["error"].startswith("the body is not valid JSON")


def test_missing_fields_are_422_naming_them(server):
    status, _, body = call(server, "POST", "/v1/score", {"samples": [{"data_source": "d"}]})
    assert (status, body["error"]) == (422, "samples[0]: missing required field(s) solution_str, ground_truth")
    status, _, body = call(server, "POST", "/slime", {"prompt": "p"})
    assert (status, body["error"]) == (422, "the /slime request is missing field(s) 'response', 'label'")


def test_a_body_over_the_limit_is_413(server):
    status, _, body = call(server, "POST", "/v1/score", {"samples": [{**ROW, "solution_str": "x" * 20000}]})
    assert status == 413 and "the limit is 10485 bytes" in body["error"]


def test_too_many_samples_in_one_request_is_413(server):
    status, _, body = call(server, "POST", "/v1/score", {"samples": [{"data_source": "d",
                                                                      "solution_str": "1",
                                                                      "ground_truth": 1}] * 65})
    assert status == 413 and body["error"] == ("65 samples in one request; the limit is 64 "
                                               "(--max-samples): split the request")


def test_an_unknown_path_is_404_and_a_request_cannot_choose_the_plugin(server):
    assert call(server, "POST", "/v1/score/faulty", {"samples": [ROW]})[0] == 404
    status, _, body = call(server, "POST", "/v1/score", {"samples": [ROW], "plugin": "faulty",
                                                         "kwargs": {"bonus": 5}})
    assert status == 200 and body["scores"] == [1.0]
    assert body["provenance"]["name"] == "exact_match"


# -- a hostile client: raw bytes no polite client sends ----------------------------------------


def raw_http(server: Server, method: bytes, path: bytes, body: bytes = b"",
             headers: tuple[bytes, ...] = (), auth: bool = True) -> tuple[int, dict[str, str], bytes]:
    """One request written byte for byte on a socket; (status, headers, body)."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    lines = [method + b" " + path + b" HTTP/1.1", b"Host: " + host.encode(), b"Connection: close",
             *((b"Authorization: Bearer " + TOKEN.encode(),) if auth else ()), *headers]
    if not any(h.lower().startswith((b"content-length:", b"transfer-encoding:")) for h in headers):
        lines.append(b"Content-Length: %d" % len(body))
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        try:
            sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered before reading everything
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, content = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    got = dict(line.split(": ", 1) for line in header_lines)
    return int(status_line.split()[1]), got, content


def _nested(depth: int) -> dict[str, Any]:
    value: Any = "x"
    for _ in range(depth):
        value = {"k": value}
    return value


NEMO = {"responses_create_params": {"input": "p"}, "expected_answer": "42",
        "response": {"output": [{"type": "message", "content": [{"type": "output_text", "text": "42"}]}]}}


def _scored(server: Server) -> float:
    return _metric(server, 'verl_rewards_samples_total{status="ok"}', TOKEN)


def test_hostile_requests_get_a_4xx_naming_the_problem_and_leave_no_traceback(server):
    import gzip

    log_before, scored_before = len(server.lines), _scored(server)
    seen = {
        "non-UTF-8 bearer token": raw_http(server, b"POST", b"/v1/score", b"{}", auth=False,
                                           headers=(b"Authorization: Bearer t\xc3\xb6\xff\xfe",)),
        "non-UTF-8 query token": raw_http(server, b"GET", b"/readyz?token=%ff%fe", auth=False),
        "JSON nested 5000 deep": raw_http(server, b"POST", b"/v1/score", b"[" * 5000 + b"]" * 5000),
        "a field nested 150 deep, echoed": raw_http(server, b"POST", b"/nemo_gym/verify",
                                                    json.dumps({**NEMO, "meta": _nested(150)}).encode()),
        "extra_info nested 100 deep": raw_http(
            server, b"POST", b"/v1/score", json.dumps({"samples": [{**ROW, "extra_info": _nested(100)}]}).encode()),
        "invalid UTF-8": raw_http(server, b"POST", b"/v1/score", b'{"samples": "\xff\xfe"}'),
        "a 5000-digit number": raw_http(server, b"POST", b"/v1/score",
                                        b'{"samples": [{"data_source": "d", "solution_str": "1", "ground_truth": '
                                        + b"9" * 5000 + b"}]}"),
        "a gzip bomb": raw_http(server, b"POST", b"/v1/score", gzip.compress(b"[" + b" " * 4_000_000 + b"]"),
                                headers=(b"Content-Encoding: gzip",)),
        "a broken chunked body": raw_http(server, b"POST", b"/v1/score", b"zz\r\n{}\r\n0\r\n\r\n",
                                          headers=(b"Transfer-Encoding: chunked",)),
        "a header line without a colon": raw_http(server, b"GET", b"/readyz", headers=(b"no colon here",)),
        "a non-ASCII path": raw_http(server, b"GET", b"/v1/\xff\xfe"),
        "an unknown method": raw_http(server, b"BREW", b"/v1/score"),
    }
    statuses = {what: status for what, (status, _, _) in seen.items()}
    assert statuses == {
        "non-UTF-8 bearer token": 401, "non-UTF-8 query token": 401, "JSON nested 5000 deep": 400,
        "a field nested 150 deep, echoed": 400, "extra_info nested 100 deep": 400,
        "invalid UTF-8": 400, "a 5000-digit number": 400, "a gzip bomb": 413,
        "a broken chunked body": 400, "a header line without a colon": 400, "a non-ASCII path": 400,
        "an unknown method": 400,
    }
    errors = {what: json.loads(body)["error"] for what, (_, headers, body) in seen.items()
              if headers.get("Content-Type", "").startswith("application/json")}
    assert errors["JSON nested 5000 deep"] == "the body nests deeper than 100 levels"
    assert errors["a field nested 150 deep, echoed"] == "the body nests deeper than 100 levels"
    assert errors["a gzip bomb"] == "the body is over the limit of 10485 bytes (--max-body-mb)"
    assert errors["a 5000-digit number"].startswith("the body is not valid JSON: Exceeds the limit")
    # aiohttp's parser answers malformed HTTP itself (text, one warning line in the log)
    assert set(statuses) - set(errors) == {"a broken chunked body", "a header line without a colon",
                                           "a non-ASCII path", "an unknown method"}
    assert _scored(server) == scored_before  # nothing was scored
    log = "".join(server.lines[log_before:])
    assert "Traceback" not in log and "Error handling request" not in log
    # the service still answers
    assert call(server, "POST", "/v1/score", {"samples": [ROW]})[2]["scores"] == [1.0]


def test_a_request_nested_within_the_limit_is_scored_and_echoed(server):
    status, _, body = call(server, "POST", "/nemo_gym/verify", {**NEMO, "meta": _nested(90)})
    assert status == 200 and body["reward"] == 1.0 and body["meta"] == _nested(90)


def test_a_misspelt_field_gets_422_suggesting_its_name(server):
    status, _, body = call(server, "POST", "/v1/score",
                           {"samples": [{"data_source": "d", "solution": "42", "groundtruth": "42"}]})
    assert (status, body["error"]) == (
        422, "samples[0]: missing required field(s) solution_str, ground_truth; did you mean "
             "'solution_str' (not 'solution') and 'ground_truth' (not 'groundtruth')?")


# -- OpenRLHF's own client, RemoteScorer ----------------------------------------------


def test_openrlhf_0_11_2s_own_http_client_gets_the_reward(server):
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    executor = SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/openrlhf?token={TOKEN}")
    prompt = "<|im_start|>user\nSay 42<|im_end|>\n<|im_start|>assistant\n"
    queries = [prompt + "42<|im_end|>"]
    (info,) = asyncio.run(executor._fetch_rewards_via_http(queries, [prompt], ["42"]))
    assert info == {"rewards": [1.0], "scores": [1.0], "extra_logs": {"reward_failed": [0.0]}}


def test_remote_scorer_has_the_scorer_api(server):
    with RemoteScorer(server.url, token=TOKEN) as scorer:
        assert scorer.provenance.display_name.startswith("exact_match (verl-rewards-testkit")
        result = scorer.score([ROW, {**ROW, "solution_str": "0"}])
        future = scorer.submit([ROW])
        assert future.result(timeout=60).scores == [1.0]
    assert result.scores == [1.0, 0.0] and result.statuses == ["ok", "ok"]
    assert result.provenance == scorer.provenance and result.n_ok == 2


def test_remote_scorer_names_the_service_when_it_refuses(server):
    with RemoteScorer(server.url, token="wrong") as scorer, \
            pytest.raises(RemoteError, match=r"POST .*/v1/score answered 401: missing or wrong token"):
        scorer.score([ROW])


def test_remote_scorer_gives_up_at_its_deadline_when_nothing_answers():
    began = time.monotonic()
    with RemoteScorer("http://127.0.0.1:9", timeout_s=1.5) as scorer, \
            pytest.raises(RemoteError, match=r"no answer within 1.5 s \(\d+ attempt\(s\), last: ConnectionRefusedError"):
        scorer.score([ROW])
    assert time.monotonic() - began < 10


# -- batching, full queue, shutdown, public bind (each its own server) ----------------------


def _metric(server: Server, name: str, token: str | None = None) -> float:
    text = call(server, "GET", "/metrics", token=token)[2]
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + " "))


async def _post_all(url: str, path: str, payloads: list[Any]) -> list[tuple[int, Any, dict[str, str]]]:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async def one(payload: Any) -> tuple[int, Any, dict[str, str]]:
            async with session.post(url + path, json=payload) as response:
                return response.status, await response.json(), dict(response.headers)

        return await asyncio.gather(*(one(p) for p in payloads))


def test_single_sample_requests_arriving_together_are_scored_as_few_batches(start, stop_serve):
    server = start("reward.plugin=sleepy", "reward.executor=local", "--dev", "reward.kwargs.ms=400")
    try:
        payloads = [{"prompt": "p", "response": str(i % 2), "label": "1"} for i in range(24)]
        answers = asyncio.run(_post_all(server.url, "/slime", payloads))
        batches = _metric(server, "verl_rewards_batch_samples_count")
        samples = _metric(server, "verl_rewards_batch_samples_sum")
    finally:
        assert stop_serve(server) == 0
    assert [a[:2] for a in answers] == [(200, float(i % 2)) for i in range(24)]
    assert samples == 24 and batches <= 6  # 24 requests, a handful of pool batches


def test_a_full_queue_answers_429_with_retry_after_and_remote_scorer_retries(start, stop_serve):
    server = start("reward.plugin=sleepy", "reward.executor=local", "--dev", "reward.kwargs.ms=1500",
                   "--max-queue", "2")
    try:
        async def main() -> list[Any]:
            first = asyncio.ensure_future(_post_all(server.url, "/v1/score", [{"samples": [ROW, ROW]}]))
            deadline = time.monotonic() + 30
            while _metric(server, "verl_rewards_queue_depth") < 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            refused = await _post_all(server.url, "/v1/score", [{"samples": [ROW]}])
            retried = await asyncio.to_thread(RemoteScorer(server.url, timeout_s=60).score, [ROW])
            return [await first, refused, retried]

        (accepted,), (refused,), retried = asyncio.run(main())
    finally:
        assert stop_serve(server) == 0
    assert accepted[0] == 200
    status, body, headers = refused
    assert status == 429 and headers["Retry-After"] == "1"
    assert body["error"] == ("the scoring queue is full: 2 samples waiting or scoring, limit 2 (--max-queue); "
                             "retry later")
    assert retried.scores == [1.0]


def test_requests_past_the_bytes_held_answer_429_before_their_body_is_read(start, stop_serve):
    server = start("reward.plugin=sleepy", "reward.executor=local", "--dev", "reward.kwargs.ms=2000",
                   "--max-body-mb", "1", "--max-queue-mb", "1")
    big = {"samples": [{**ROW, "solution_str": "42" + " " * 600_000}]}  # 0.6 MB: one fits, two do not
    try:
        async def main() -> list[Any]:
            first = asyncio.ensure_future(_post_all(server.url, "/v1/score", [big]))
            deadline = time.monotonic() + 30
            while _metric(server, "verl_rewards_queue_depth") < 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            held = _metric(server, "verl_rewards_queue_bytes")
            refused = await _post_all(server.url, "/v1/score", [big])
            small = await _post_all(server.url, "/v1/score", [{"samples": [ROW]}])
            return [await first, refused, small, held]

        (accepted,), (refused,), (small,), held = asyncio.run(main())
        after = _metric(server, "verl_rewards_queue_bytes")
    finally:
        assert stop_serve(server) == 0
    assert accepted[:2] == (200, {**accepted[1], "scores": [1.0]}) and small[0] == 200
    assert held == len(json.dumps(big)) and after == 0
    status, body, headers = refused
    assert status == 429 and headers["Retry-After"] == "1"
    assert body["error"] == (f"the scoring queue is full: {int(held)} bytes waiting or scoring, limit 1048576 "
                             f"(--max-queue-mb); retry later")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_sigterm_finishes_the_request_in_flight_and_exits_0(sig, start, stop_serve):
    server = start("reward.plugin=sleepy", "reward.executor=local", "--dev", "reward.kwargs.ms=3000")
    answers: list[Any] = []
    client = threading.Thread(target=lambda: answers.append(
        call(server, "POST", "/v1/score", {"samples": [ROW]}, token=None)))
    client.start()
    deadline = time.monotonic() + 30
    while _metric(server, "verl_rewards_queue_depth") < 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    code = stop_serve(server, sig=sig)
    client.join(60)
    assert code == 0
    status, _, body = answers[0]
    assert status == 200 and body["scores"] == [1.0] and body["statuses"] == ["ok"]
    out = "".join(server.lines)
    assert "stopping; finishing 1 sample(s) in flight" in out and "serve: stopped" in out
    with pytest.raises(urllib.error.URLError):  # no longer accepting
        urllib.request.urlopen(server.url + "/healthz", timeout=5)


def test_a_public_bind_without_a_token_exits_2_saying_why():
    env = {k: v for k, v in os.environ.items() if k != "VERL_REWARDS_TOKEN"}
    done = subprocess.run([CLI, "serve", "--host", "0.0.0.0", "--port", "0",
                           "reward.plugin=exact_match", "reward.executor=local"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2
    assert "refusing to serve on 0.0.0.0 without a token" in done.stderr
    assert "VERL_REWARDS_TOKEN" in done.stderr


def test_a_port_in_use_exits_1_naming_it_before_the_pool_starts(server):
    port = server.url.rsplit(":", 1)[1]
    done = subprocess.run([CLI, "serve", "--port", port, "reward.plugin=exact_match",
                           "reward.executor=local", "--dev"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == (f"verl-rewards: error: cannot listen on 127.0.0.1:{port}: Address already in use; "
                           f"choose another --port (0 picks a free one) or --host\n")


def test_the_local_executor_without_dev_exits_2_saying_why():
    done = subprocess.run([CLI, "serve", "--port", "0", "reward.plugin=faulty", "reward.executor=local"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "listening" not in done.stdout
    assert "a reward stuck in C blocks every request" in done.stderr and "add --dev" in done.stderr


def test_an_unknown_plugin_exits_2_before_listening():
    done = subprocess.run([CLI, "serve", "--port", "0", "reward.plugin=exact_matc",
                           "reward.executor=local"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Did you mean 'exact_match'" in done.stderr
    assert "listening" not in done.stdout


# -- reward.remote_url: every entry point through the one path ----------------------------------


def test_a_config_with_remote_url_scores_on_the_service(server, monkeypatch):
    from verl_rewards import Scorer

    monkeypatch.setenv("VERL_REWARDS_TOKEN", TOKEN)
    with Scorer.from_config({"plugin": "exact_match", "remote_url": server.url,
                             "error_score": -1.0}) as scorer:
        result = scorer.score([ROW, {**ROW, "solution_str": "0"}])
    assert result.scores == [1.0, 0.0] and result.statuses == ["ok", "ok"]
    assert result.extra_info["pid"] == [server.proc.pid] * 2  # scored in the service's process
    assert result.provenance.name == "exact_match" and "remote_latency_s" in result.metrics


def test_the_trl_adapter_points_at_the_service_with_remote_url(server, monkeypatch):
    from verl_rewards.integrations.trl import reward_func

    monkeypatch.setenv("VERL_REWARDS_TOKEN", TOKEN)
    func = reward_func(reward={"plugin": "exact_match", "remote_url": server.url})
    assert func(prompts=["p", "p"], completions=["42", "41"], ground_truth=["42", "42"]) == [1.0, 0.0]


def test_remote_url_refuses_a_service_of_another_reward_or_kwargs(server, monkeypatch):
    from verl_rewards import Scorer
    from verl_rewards.remote import RemoteRewardMismatch

    monkeypatch.setenv("VERL_REWARDS_TOKEN", TOKEN)
    scorer = Scorer.from_config({"plugin": "batch_exact", "remote_url": server.url})
    with pytest.raises(RemoteRewardMismatch, match=r"serves exact_match \(verl-rewards-testkit .*asks for "
                                                   r"batch_exact \(verl-rewards-testkit"):
        scorer.start()
    scorer = Scorer.from_config({"plugin": "exact_match", "remote_url": server.url, "timeout_s": 5})
    with pytest.raises(RemoteRewardMismatch, match=r"serves exact_match \(verl-rewards-testkit .*\) with "
                                                   r"another reward.timeout_s than this config"):
        scorer.start()


# -- a failed sample, as each protocol shows it -----------------------------------------------


@pytest.fixture(scope="module")
def faulty(start: Callable[..., Server], stop_serve: Callable[..., int]) -> Iterator[Server]:
    """The testkit's `faulty` plugin on the local executor (a raise is safe in-process)."""
    running = start("reward.plugin=faulty", "reward.executor=local", "--dev", "reward.error_score=-1")
    try:
        yield running
    finally:
        assert stop_serve(running) == 0


def test_each_protocol_shows_a_failed_sample_its_own_way(faulty):
    status, headers, body = call(faulty, "POST", "/slime", {"prompt": "p", "response": "raise",
                                                            "label": "1"}, token=None)
    assert (status, body) == (200, -1.0)
    assert headers["X-Verl-Rewards-Status"] == "failed"
    assert headers["X-Verl-Rewards-Error"].startswith("RuntimeError: the reward raised on purpose")
    status, _, body = call(faulty, "POST", "/openrlhf", {"query": ["q raise", "q 1"], "prompts": ["q ", "q "],
                                                         "labels": ["1", "1"]}, token=None)
    assert (status, body) == (200, {"rewards": [-1.0, 1.0], "scores": [-1.0, 1.0],
                                    "extra_logs": {"reward_failed": [1.0, 0.0]}})
    request = {"responses_create_params": {"input": "p"}, "expected_answer": "1",
               "response": {"output": [{"type": "message",
                                        "content": [{"type": "output_text", "text": "nan"}]}]}}
    status, _, body = call(faulty, "POST", "/nemo_gym/verify", request, token=None)
    assert status == 200 and body["reward"] == -1.0
    assert body["failure_reason"].startswith("RewardValueError:")
    assert body["verl_rewards"]["status"] == "failed"
    text = call(faulty, "GET", "/metrics", token=None)[2]
    assert 'verl_rewards_samples_total{status="failed"} 3.0' in text


def test_with_on_error_raise_a_failed_sample_is_a_500_naming_it(start, stop_serve):
    server = start("reward.plugin=faulty", "reward.executor=local", "--dev", "reward.on_error=raise")
    try:
        status, _, body = call(server, "POST", "/v1/score",
                               {"samples": [ROW, {**ROW, "solution_str": "raise"}]}, token=None)
        healthy = call(server, "POST", "/v1/score", {"samples": [{**ROW, "solution_str": "42"}]}, token=None)
    finally:
        assert stop_serve(server) == 0
    assert status == 500
    assert body["error"].startswith("reward faulty (verl-rewards-testkit")
    assert "failed on sample 1: RuntimeError: the reward raised on purpose" in body["error"]
    assert healthy[0] == 200 and healthy[2]["scores"] == [1.0]


def test_with_on_error_skip_each_endpoint_does_what_its_host_can(start, stop_serve):
    server = start("reward.plugin=faulty", "reward.executor=local", "--dev", "reward.on_error=skip")
    nemo = {"responses_create_params": {"input": "What is 6 x 7?"}, "expected_answer": "42",
            "response": {"output": [{"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": "raise"}]}]}}
    try:
        masked = call(server, "POST", "/nemo_gym/verify", nemo, token=None)
        native = call(server, "POST", "/v1/score", {"samples": [ROW, {**ROW, "solution_str": "raise"}]},
                      token=None)
        slime = call(server, "POST", "/slime", {"prompt": "p", "response": "42", "label": "42"}, token=None)
        openrlhf = call(server, "POST", "/openrlhf", {"query": ["p 42"], "prompts": ["p"], "labels": ["42"]},
                        token=None)
    finally:
        assert stop_serve(server) == 0
    assert masked[0] == 200
    assert (masked[2]["mask_sample"], masked[2]["failure_kind"]) == (True, "verifier_error")
    assert native[0] == 200 and native[2]["statuses"] == ["ok", "failed"]
    assert (slime[0], openrlhf[0]) == (409, 409)
    assert slime[2]["error"].startswith("on_error: skip is refused in verl-rewards serve POST /slime: ")
    assert "Use the slime adapter (--custom-rm-path" in slime[2]["error"]
    assert openrlhf[2]["error"].startswith("on_error: skip is refused in verl-rewards serve POST /openrlhf")
    assert any("on_error=skip: /openrlhf, /slime answer every request 409" in line for line in server.lines)


def test_a_reward_calling_sys_exit_fails_its_sample_and_the_service_goes_on(
        start, stop_serve, reward_file):
    path = reward_file("import sys\n\ndef compute_score(data_source, solution_str, ground_truth, "
                       "extra_info=None):\n    if solution_str == 'exit':\n        sys.exit(0)\n"
                       "    return 1.0\n")
    server = start(f"reward.path={path}", "reward.executor=local", "--dev")
    try:
        status, _, body = call(server, "POST", "/v1/score",
                               {"samples": [ROW, {**ROW, "solution_str": "exit"}]}, token=None)
        after = call(server, "POST", "/v1/score", {"samples": [ROW]}, token=None)
    finally:
        assert stop_serve(server) == 0  # it was still serving: SIGTERM drained it
    assert status == 200 and body["statuses"] == ["ok", "failed"]
    assert body["errors"][1] == f"SystemExit: 0 (at {path}:5 in compute_score)"
    assert after[0] == 200 and after[2]["scores"] == [1.0]
