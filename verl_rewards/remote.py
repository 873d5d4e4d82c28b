""":class:`RemoteScorer`: the :class:`~verl_rewards.Scorer` API over a ``verl-rewards serve``.

Scoring happens on the service's pool; this process imports no plugin and no
Ray. The first call reaches the service (``GET /healthz``) within a short
connect deadline (``connect_timeout_s``), so a wrong URL fails in seconds.
Then each call has one deadline (``timeout_s``) covering its retries: a full
queue (429) or a pool that is starting or being replaced (503) is retried
with exponential backoff (the server's ``Retry-After`` first), as is a
refused or reset connection (a front end restarting). Each retry is logged
(``verl_rewards.remote``) as it happens. Other answers are errors naming the
service and what it said. Requests and answers are JSON in the one wire
encoding (:mod:`verl_rewards.wire`).
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, ExecutorError
from .outcomes import Outcome
from .results import BatchResult, Provenance
from .samples import Sample, SampleLike, as_samples
from .scoring import raise_first_failure
from .spec import ScoreIdentity, score_identity
from .wire import dumps, provenance_from_json, result_from_json, sample_to_json

if TYPE_CHECKING:
    from .config import RewardConfig
    from .spec import RewardSpec

log = logging.getLogger("verl_rewards.remote")

RETRY_STATUSES = frozenset({429, 503})
CONNECT_TIMEOUT_S = 10.0


class RemoteError(ExecutorError):
    """The service refused a request, or did not answer before the deadline."""


class RemoteRewardMismatch(ConfigError):
    """``reward.remote_url`` points at a service that scores with another reward section."""


class RemoteScorer:
    """Scores batches on a reward service, with the :class:`Scorer` API.

    >>> with RemoteScorer("http://127.0.0.1:8000", token="s3cret") as scorer:  # doctest: +SKIP
    ...     result = scorer.score([{"data_source": "openai/gsm8k",
    ...                             "solution_str": "#### 72", "ground_truth": "72"}])
    """

    def __init__(self, url: str, token: str | None = None, *, timeout_s: float = 600.0,
                 connect_timeout_s: float = CONNECT_TIMEOUT_S, backoff_s: float = 0.25,
                 max_backoff_s: float = 10.0, max_workers: int = 4) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self._reached = False  # the service has answered once: later refusals are a restart
        self._token = token
        self._backoff_s, self._max_backoff_s = backoff_s, max_backoff_s
        self._max_workers = max_workers
        self._provenance: Provenance | None = None
        self._background: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False

    def __enter__(self) -> RemoteScorer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def start(self) -> RemoteScorer:
        """Nothing to start: the service owns the pool. Returns ``self``."""
        return self

    @property
    def provenance(self) -> Provenance:
        """The served reward's provenance (asked of the service once)."""
        if self._provenance is None:
            self._provenance = provenance_from_json(self.info()["provenance"])
        return self._provenance

    def info(self) -> dict[str, Any]:
        """The service's ``GET /v1/info``: its reward's provenance and score identity, its
        pool, its limits."""
        self._reach()
        info: dict[str, Any] = self._request("GET", "/v1/info", None)
        return info

    def score(self, samples: Iterable[SampleLike]) -> BatchResult:
        """Score ``samples`` on the service and wait for the result (in input order)."""
        rows = [sample_to_json(s) for s in as_samples(samples)]  # malformed input fails here
        if self._closed:
            raise RemoteError(f"the RemoteScorer for {self.url} is closed")
        self._reach()
        began = time.perf_counter()
        answer = self._request("POST", "/v1/score", {"samples": rows})
        result = result_from_json(answer, {"latency_s": time.perf_counter() - began})
        self._provenance = result.provenance
        return result

    def submit(self, samples: Iterable[SampleLike]) -> Future[BatchResult]:
        """Score ``samples`` in the background; a future of the result."""
        batch = as_samples(samples)
        with self._lock:
            if self._closed:
                raise RemoteError(f"the RemoteScorer for {self.url} is closed")
            if self._background is None:
                self._background = ThreadPoolExecutor(self._max_workers,
                                                      thread_name_prefix="verl-rewards-remote")
            return self._background.submit(self.score, batch)

    def close(self) -> None:
        """Wait for submitted batches; later calls fail."""
        with self._lock:
            self._closed = True
            background, self._background = self._background, None
        if background is not None:
            background.shutdown(wait=True)

    # -- HTTP ---------------------------------------------------------------

    def _reach(self) -> None:
        """The first contact (``GET /healthz``, open without the token), within the connect
        deadline: any answer at all says the service is there."""
        if not self._reached:
            self._request("GET", "/healthz", None, min(self.connect_timeout_s, self.timeout_s))

    def _request(self, method: str, path: str, payload: Any, limit: float | None = None) -> Any:
        limit = self.timeout_s if limit is None else limit
        deadline = time.monotonic() + limit
        data = None if payload is None else dumps(payload).encode()
        attempt, last = 0, "no attempt"
        while (left := deadline - time.monotonic()) > 0:
            try:
                return self._once(method, path, data, left)
            except _Retry as e:
                wait = e.retry_after if e.retry_after is not None else self._backoff(attempt)
                attempt, last = attempt + 1, e.reason
            wait = max(0.0, min(wait, deadline - time.monotonic()))
            if wait > 0:
                log.log(logging.INFO if last.startswith("429") else logging.WARNING,
                        "%s %s%s: %s; retrying in %.1f s (%.0f s left)", method, self.url, path, last,
                        wait, deadline - time.monotonic())
            time.sleep(wait)
        raise RemoteError(f"{method} {self.url}{path}: no answer within {limit:g} s "
                          f"({attempt} attempt(s), last: {last}); is the service up? "
                          f"(GET {self.url}/readyz)")

    def _once(self, method: str, path: str, data: bytes | None, timeout: float) -> Any:
        headers = {"Content-Type": "application/json"}
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token}"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                self._reached = True
                return json.loads(response.read())
        except urllib.error.HTTPError as e:
            self._reached = True
            message = _error_text(e)
            if e.code in RETRY_STATUSES:
                raise _Retry(f"{e.code}: {message}", _retry_after(e.headers.get("Retry-After"))) from e
            raise RemoteError(f"{method} {self.url}{path} answered {e.code}: {message}") from e
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise _Retry(f"{type(reason).__name__}: {reason}", None) from e

    def _backoff(self, attempt: int) -> float:
        base = min(self._max_backoff_s, self._backoff_s * 2 ** min(attempt, 16))
        return float(base * (0.5 + random.random() / 2))  # jitter: clients retrying together spread out


class _Retry(Exception):
    def __init__(self, reason: str, retry_after: float | None) -> None:
        super().__init__(reason)
        self.reason, self.retry_after = reason, retry_after


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _error_text(error: urllib.error.HTTPError) -> str:
    try:
        body = error.read()
        return str(json.loads(body).get("error", body.decode(errors="replace")))
    except (ValueError, AttributeError, OSError):
        return str(error.reason)


class RemoteExecutor:
    """The executor of a config with ``remote_url``: every entry point (``Scorer``, CLI,
    trainer, adapters) scores on the service through it; the token comes from
    ``VERL_REWARDS_TOKEN``. At start the service must score with the same reward section
    as this config, as far as it decides a score (:func:`verl_rewards.spec.score_identity`:
    the reward at its version or source, kwargs, weights, routes, timeout), else a
    :class:`RemoteRewardMismatch` (a config error) names what differs. ``on_error`` and
    ``error_score`` are this config's."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        assert config.remote_url is not None
        self._spec, self._url = spec, config.remote_url
        self._identity = score_identity(spec, config)
        self._client: RemoteScorer | None = None

    def start(self) -> None:
        client = RemoteScorer(self._url, token=os.environ.get("VERL_REWARDS_TOKEN") or None)
        info = client.info()
        _check_identity(self._url, self._spec, self._identity, info)
        self._client = client

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> tuple[list[Outcome], dict[str, float]]:
        if self._client is None:
            raise ExecutorError(f"the remote executor for {self._url} is not started")
        result = self._client.score(samples)
        keys = list(result.extra_info)
        outcomes = [
            Outcome(score if status == "ok" else None,
                    {k: result.extra_info[k][i] for k in keys} or None, error, status)
            for i, (score, error, status) in enumerate(zip(result.scores, result.errors, result.statuses))
        ]
        if stop_on_error:
            raise_first_failure(self._spec.display_name, outcomes)
        return outcomes, {"remote_latency_s": result.metrics["latency_s"]}

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


_PART_NAMES = {"reward": "reward (plugin or file, at its version or source)"}


def _check_identity(url: str, spec: RewardSpec, wanted: ScoreIdentity, info: dict[str, Any]) -> None:
    """Refuse a service whose score identity is not this config's, naming what differs."""
    published = info.get("score_identity")
    served = provenance_from_json(info["provenance"]).display_name
    if not isinstance(published, dict) or "key" not in published:
        raise RemoteRewardMismatch(
            f"the service at {url} (serving {served}) does not publish its score identity (a "
            f"verl-rewards older than this client's), so this client cannot check that it scores "
            f"with this config's reward section: upgrade the service")
    if published["key"] == wanted.key:
        return
    parts = published.get("parts") or {}
    differ = [p for p in wanted.parts if parts.get(p) != wanted.parts[p]]
    if "reward" in differ:
        what = f"serves {served}, but this config asks for {spec.display_name}"
        differ.remove("reward")
        if differ:
            what += f" (and its {', '.join(_PART_NAMES.get(p, f'reward.{p}') for p in differ)} differ)"
    else:
        what = (f"serves {served} with another {', '.join(f'reward.{p}' for p in differ) or 'section'} "
                f"than this config")
    raise RemoteRewardMismatch(
        f"the service at {url} {what}: a score would not be the one this config asks for. Point "
        f"reward.remote_url at a service of this reward section, or use the service's section "
        f"(GET {url}/v1/info)")
