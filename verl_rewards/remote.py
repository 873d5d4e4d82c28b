""":class:`RemoteScorer`: the :class:`~verl_rewards.Scorer` API over a ``verl-rewards serve``.

Scoring happens on the service's pool; this process imports no plugin and no
Ray. Each call has one deadline (``timeout_s``) covering its retries: a full
queue (429) or a pool that is starting or being replaced (503) is retried
with exponential backoff (the server's ``Retry-After`` first), as is a
refused or reset connection (a front end restarting). Other answers are
errors naming the service and what it said.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .errors import ExecutorError, RewardError
from .outcomes import Outcome
from .results import BatchResult, Provenance
from .samples import Sample, SampleLike, as_samples

if TYPE_CHECKING:
    from .config import RewardConfig
    from .spec import RewardSpec

RETRY_STATUSES = frozenset({429, 503})


class RemoteError(ExecutorError):
    """The service refused a request, or did not answer before the deadline."""


class RemoteScorer:
    """Scores batches on a reward service, with the :class:`Scorer` API.

    >>> with RemoteScorer("http://127.0.0.1:8000", token="s3cret") as scorer:  # doctest: +SKIP
    ...     result = scorer.score([{"data_source": "openai/gsm8k",
    ...                             "solution_str": "#### 72", "ground_truth": "72"}])
    """

    def __init__(self, url: str, token: str | None = None, *, timeout_s: float = 600.0,
                 backoff_s: float = 0.25, max_backoff_s: float = 10.0, max_workers: int = 4) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
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
            info = self._request("GET", "/v1/info", None)
            self._provenance = provenance_from_json(info["provenance"])
        return self._provenance

    def score(self, samples: Iterable[SampleLike]) -> BatchResult:
        """Score ``samples`` on the service and wait for the result (in input order)."""
        rows = [_row(s) for s in as_samples(samples)]  # malformed input fails here, in the caller
        if self._closed:
            raise RemoteError(f"the RemoteScorer for {self.url} is closed")
        began = time.perf_counter()
        answer = self._request("POST", "/v1/score", {"samples": rows})
        provenance = provenance_from_json(answer["provenance"])
        self._provenance = provenance
        return BatchResult(scores=[float(s) for s in answer["scores"]], errors=answer["errors"],
                           statuses=answer["statuses"], extra_info=answer["extra_info"],
                           provenance=provenance,
                           metrics={"latency_s": time.perf_counter() - began})

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

    def _request(self, method: str, path: str, payload: Any) -> Any:
        deadline = time.monotonic() + self.timeout_s
        data = None if payload is None else json.dumps(payload).encode()
        attempt, last = 0, "no attempt"
        while (left := deadline - time.monotonic()) > 0:
            try:
                return self._once(method, path, data, left)
            except _Retry as e:
                wait = e.retry_after if e.retry_after is not None else self._backoff(attempt)
                attempt, last = attempt + 1, e.reason
            time.sleep(max(0.0, min(wait, deadline - time.monotonic())))
        raise RemoteError(f"{method} {self.url}{path}: no answer within {self.timeout_s:g} s "
                          f"({attempt} attempt(s), last: {last}); is the service up? "
                          f"(GET {self.url}/readyz)")

    def _once(self, method: str, path: str, data: bytes | None, timeout: float) -> Any:
        headers = {"Content-Type": "application/json"}
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token}"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as e:
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


def _row(sample: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"data_source": sample.data_source, "solution_str": sample.solution_str,
                           "ground_truth": sample.ground_truth}
    if sample.extra_info is not None:
        row["extra_info"] = dict(sample.extra_info)
    if sample.prompt is not None:
        row["prompt"] = sample.prompt
    return row


def provenance_from_json(data: Mapping[str, Any]) -> Provenance:
    """The inverse of the service's provenance JSON."""
    parts = tuple((c["key"], float(c["weight"]), provenance_from_json(c["provenance"]))
                  for c in data.get("components") or ())
    return Provenance(data["kind"], data["name"], data["display_name"], data.get("dist"),
                      data.get("version"), data.get("path"), data.get("source_hash"), parts)


class RemoteExecutor:
    """The executor of a config with ``remote_url``: every entry point (``Scorer``, CLI,
    trainer, adapters) scores on the service through it. The service's own section
    (kwargs, timeouts, pool) applies; the token comes from ``VERL_REWARDS_TOKEN``.
    At start the service must serve the reward this config names (same plugin and
    version, or the same file source)."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        assert config.remote_url is not None
        self._spec, self._url = spec, config.remote_url
        self._client: RemoteScorer | None = None

    def start(self) -> None:
        client = RemoteScorer(self._url, token=os.environ.get("VERL_REWARDS_TOKEN") or None)
        wanted, served = Provenance.of(self._spec), client.provenance
        if _identity(wanted) != _identity(served):
            raise ExecutorError(
                f"the service at {self._url} serves {served.display_name}, but this config asks "
                f"for {wanted.display_name}: point reward.remote_url at a service of that reward, "
                f"or choose the reward it serves")
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
            for i, outcome in enumerate(outcomes):
                if outcome.status != "ok":
                    raise RewardError(self._spec.display_name, i, outcome.error or outcome.status)
        return outcomes, {"remote_latency_s": result.metrics["latency_s"]}

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def _identity(provenance: Provenance) -> tuple[Any, ...]:
    """What makes two provenances the same reward (a file's path may differ between hosts)."""
    parts = tuple((k, w, _identity(p)) for k, w, p in provenance.components)
    return (provenance.kind, provenance.name, provenance.dist, provenance.version,
            provenance.source_hash, parts)
