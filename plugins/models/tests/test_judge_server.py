"""``llm_judge`` against a real chat-completions server on 127.0.0.1, by config alone."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import psutil
import pytest

from verl_rewards import Scorer


def _config(server_url: str, **kwargs: Any) -> dict[str, Any]:
    return {"plugin": "llm_judge", "executor": "local", "timeout_s": 20,
            "kwargs": {"base_url": server_url, "model": "judge", "template": "{response}",
                       "retry_backoff_s": 0.05, **kwargs}}


def _rows(*responses: str, prompt: Any = None) -> list[dict[str, Any]]:
    return [{"data_source": "chat", "solution_str": r, "ground_truth": "", "prompt": prompt} for r in responses]


def _score(config: dict[str, Any], rows: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    with Scorer.from_config(config) as scorer:
        return scorer.score(rows)


def test_each_sample_is_scored_on_zero_one_with_the_judges_value(chat_server) -> None:
    result = _score(_config(chat_server.base_url), _rows("score=0", "score=7", "score=10"))
    assert result.errors == [None, None, None]
    assert result.scores == pytest.approx([0.0, 0.7, 1.0])
    assert result.extra_info["judge_value"] == [0.0, 7.0, 10.0]


def test_the_prompt_response_truth_and_system_reach_the_endpoint(chat_server) -> None:
    config = _config(chat_server.base_url, system="You grade answers.",
                     template="Q: {prompt}\nA: {response}\nRef: {ground_truth}")
    rows = [{"data_source": "math", "solution_str": "score=9", "ground_truth": "42",
             "prompt": [{"role": "user", "content": "What is 6 x 7?"}]}]
    assert _score(config, rows).scores == [0.9]
    [(_, messages)] = chat_server.requests
    assert messages == [{"role": "system", "content": "You grade answers."},
                        {"role": "user", "content": "Q: What is 6 x 7?\nA: score=9\nRef: 42"}]


def test_429s_and_500s_are_retried_until_an_answer(chat_server) -> None:
    result = _score(_config(chat_server.base_url, max_retries=3), _rows("fail=429x2 score=4", "fail=500x3 score=6"))
    assert result.errors == [None, None]
    assert result.scores == pytest.approx([0.4, 0.6])
    assert (chat_server.count("fail=429x2 score=4"), chat_server.count("fail=500x3 score=6")) == (3, 4)


def test_retries_give_up_after_max_retries_naming_the_endpoint_and_the_status(chat_server) -> None:
    result = _score(_config(chat_server.base_url, max_retries=2), _rows("fail=503x9 score=1", "score=3"))
    assert result.scores[1] == pytest.approx(0.3)
    assert result.errors[0].startswith(
        f"JudgeUnavailableError: llm_judge: no answer from {chat_server.base_url} after 3 attempt(s): "
        "InternalServerError: Error code: 503")
    assert chat_server.count("fail=503x9 score=1") == 3


def test_a_client_error_is_not_retried(chat_server) -> None:
    result = _score(_config(chat_server.base_url), _rows("fail=400x9 score=1"))
    assert result.errors[0].startswith(f"JudgeUnavailableError: llm_judge: {chat_server.base_url} refused "
                                       "the request: HTTP 400")
    assert chat_server.count("fail=400x9 score=1") == 1


def test_a_429_storm_is_retried_within_the_requests_per_minute_limit(chat_server) -> None:
    rows = _rows(*(f"fail=429x2 score={i}" for i in range(6)))  # 18 requests in all
    started = time.monotonic()
    result = _score(_config(chat_server.base_url, rpm=300, max_retries=3, retry_backoff_s=0.01), rows)
    elapsed = time.monotonic() - started
    assert result.errors == [None] * 6
    assert result.scores == pytest.approx([i / 10 for i in range(6)])
    stamps = [t for t, _ in chat_server.requests]
    assert len(stamps) == 18
    # 5 a second with a burst of 5: any window of w seconds holds at most 5 + 5 w
    # requests (+2 for jitter between leaving the limiter and being recorded by the server).
    for i, first in enumerate(stamps):
        for j in range(i, len(stamps)):
            assert j - i + 1 <= 5 + 5 * (stamps[j] - first) + 2, (i, j, stamps)
    assert elapsed >= (18 - 5) / 5 - 0.2


def test_a_dead_endpoint_is_a_failed_sample_with_a_clear_error_not_a_hang() -> None:
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    started = time.monotonic()
    result = _score(_config(dead, max_retries=1, request_timeout_s=2), _rows("score=1", "score=2"))
    assert time.monotonic() - started < 10
    assert result.n_failed == 2
    for error in result.errors:
        assert error.startswith(f"JudgeUnavailableError: llm_judge: no answer from {dead} after 2 attempt(s): "
                                "APIConnectionError")


def test_a_reply_slower_than_request_timeout_is_retried_then_failed(chat_server) -> None:
    started = time.monotonic()
    result = _score(_config(chat_server.base_url, request_timeout_s=0.3, max_retries=1),
                    _rows("slow=1.5 score=1", "score=2"))
    assert time.monotonic() - started < 8
    assert result.scores[1] == pytest.approx(0.2)
    assert "after 2 attempt(s): JudgeDeadlineError: no complete reply within request_timeout_s=0.3 s" \
        in result.errors[0]


def test_a_reply_slower_than_the_samples_timeout_is_a_timeout(chat_server) -> None:
    config = {**_config(chat_server.base_url, request_timeout_s=10, max_retries=0), "timeout_s": 0.5}
    result = _score(config, _rows("slow=2 score=1", "score=8"))
    assert result.errors[0].startswith("SampleTimeout")
    assert result.scores[1] == pytest.approx(0.8)


@pytest.mark.parametrize(("response", "error"), [
    ("say=I_cannot_tell.", "JudgeReplyError: llm_judge (judge at {url}): no score in the judge's reply "
                           "(expected a number in [0, 10]): 'I cannot tell.'"),
    ("say=Score:_12", "JudgeReplyError: llm_judge (judge at {url}): the judge's score 12 is outside [0, 10]"),
    ("nochoices", "JudgeReplyError: llm_judge: {url} sent a malformed or empty completion"),
    ("malformed", "JudgeReplyError: llm_judge: {url} sent a malformed completion: JSONDecodeError: "),
])
def test_unusable_replies_fail_only_their_own_sample(chat_server, response: str, error: str) -> None:
    result = _score(_config(chat_server.base_url, max_retries=0), _rows(response, "score=5"))
    assert result.scores[1] == pytest.approx(0.5)
    assert result.errors[0] is not None
    assert result.errors[0].startswith(error.format(url=chat_server.base_url)), result.errors[0]


def test_every_sample_of_a_mixed_batch_gets_exactly_one_result(chat_server) -> None:
    kinds = ["score=3", "fail=429x1 score=6", "say=no_idea", "malformed", "slow=0.2 score=9", "fail=500x9"]
    rows = _rows(*(f"{k} #{i}" for i in range(5) for k in kinds))
    result = _score(_config(chat_server.base_url, max_retries=2), rows)
    assert len(result.scores) == len(result.errors) == len(rows) == 30
    ok = [e is None for e in result.errors]
    assert ok == [k in ("score=3", "fail=429x1 score=6", "slow=0.2 score=9") for _ in range(5) for k in kinds]


def test_a_server_dripping_bytes_is_stopped_at_request_timeout_even_without_a_sample_timeout(chat_server) -> None:
    config = {**_config(chat_server.base_url, request_timeout_s=1.0, max_retries=1), "timeout_s": None}
    started = time.monotonic()
    result = _score(config, _rows("drip=0.2 score=1", "score=6"))
    assert time.monotonic() - started < 10  # two 1 s attempts; the drip would take ~60 s
    assert result.scores[1] == pytest.approx(0.6)
    assert "after 2 attempt(s): JudgeDeadlineError: no complete reply within request_timeout_s=1 s" \
        in result.errors[0]


def _connections_to(port: int) -> int:
    """This process's TCP sockets to ``port``, in any state."""
    return sum(1 for c in psutil.Process().net_connections(kind="tcp") if c.raddr and c.raddr.port == port)


def test_cancelled_requests_release_their_sockets(chat_server) -> None:
    port = int(chat_server.base_url.rsplit(":", 1)[1].split("/")[0])
    config = {**_config(chat_server.base_url, request_timeout_s=30, max_retries=0),
              "timeout_s": 0.5, "max_concurrency": 4}
    peak, done = [0], threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _connections_to(port))
            time.sleep(0.01)

    with Scorer.from_config(config) as scorer:
        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            result = scorer.score(_rows(*(f"slow=3 score=1 #{i}" for i in range(16))))
        finally:
            done.set()
            watcher.join()
        assert result.statuses == ["timeout"] * 16
        assert 1 <= peak[0] <= 4  # at most max_concurrency sockets, even as requests are cancelled
        assert _connections_to(port) == 0
        assert scorer.score(_rows("score=7")).scores == [pytest.approx(0.7)]  # the pool still works


def test_a_redirect_to_another_origin_is_not_followed_and_nothing_reaches_it(chat_server) -> None:
    from verl_rewards_models.testing import ChatServer

    with ChatServer() as elsewhere:
        target = f"{elsewhere.base_url}/chat/completions"
        result = _score(_config(chat_server.base_url, max_retries=2), _rows(f"redirect={target} score=1"))
        assert elsewhere.requests == []
    assert result.errors[0].startswith(f"JudgeUnavailableError: llm_judge: {chat_server.base_url} redirected "
                                       f"to http://{elsewhere.base_url.split('/')[2]}; not followed")
    assert chat_server.count(f"redirect={target} score=1") == 1  # not retried


def test_a_redirect_within_the_same_origin_is_followed(chat_server) -> None:
    target = f"{chat_server.base_url}/chat/completions"
    result = _score(_config(chat_server.base_url), _rows(f"redirect={target} score=4"))
    assert result.errors == [None] and result.scores == [pytest.approx(0.4)]
    assert chat_server.count(f"redirect={target} score=4") == 2
