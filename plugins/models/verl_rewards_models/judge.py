"""``llm_judge``: score a response by asking an OpenAI-compatible chat endpoint.

One :class:`LLMJudge` per worker process holds one ``AsyncOpenAI`` client (and
its connection pool) for the process's event loop. Each sample is one chat
completion: the template rendered over the sample's prompt, response and
ground truth. Retries (429, 5xx, connection errors and timeouts, with
exponential backoff honouring ``Retry-After``) are done here rather than by
the client, so that every attempt passes the ``rpm``/``tpm`` limiter.
Concurrency is bounded by ``reward.max_concurrency`` per worker, and every
request, whole, by ``request_timeout_s``; requests go only to ``base_url``'s
origin (a redirect elsewhere is refused, not followed).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from verl_rewards import reward

from .judge_text import DEFAULT_TEMPLATE, JudgeReplyError, check_template, parse_score, render, score_label
from .ratelimit import RateLimiter

if TYPE_CHECKING:
    import httpx2

_MAX_BACKOFF_S = 30.0
_NO_KEY = "none"  # servers started without --api-key (vLLM, SGLang) ignore the header


class JudgeUnavailableError(RuntimeError):
    """The endpoint did not answer usefully within the allowed attempts."""


class JudgeDeadlineError(TimeoutError):
    """One request got no complete reply within ``request_timeout_s`` (retried like a timeout)."""


class CrossOriginRedirectError(RuntimeError):
    """The endpoint redirected to another origin; the request was not sent there."""


@reward(
    description="An LLM judge behind an OpenAI-compatible chat completions endpoint "
                "(vLLM, SGLang, a hosted API): the score its reply gives ('Score: N', 'N/10', "
                "'N out of 10'), mapped onto 0..1; an ambiguous reply fails the sample.",
    tags=("model", "llm-judge", "async"),
    kind="judge",
    examples=[
        {"solution_str": "42", "ground_truth": "42", "prompt": "What is 6 x 7?", "expected": 0.7,
         "kwargs": {"base_url": "http://judge.invalid/v1", "model": "self-test",
                    "offline_reply": "Correct and brief. Score: 7"}},
        {"solution_str": "41", "ground_truth": "42", "prompt": "What is 6 x 7?", "expected": 0.0,
         "kwargs": {"base_url": "http://judge.invalid/v1", "model": "self-test",
                    "verdicts": {"correct": 1.0, "incorrect": 0.0},
                    "offline_reply": "41 is not 42, so the answer is incorrect."}},
    ],
)
class LLMJudge:
    """Ask ``model`` at ``base_url`` to grade each response.

    ``offline_reply``, when set, answers every request with that text inside
    the HTTP client, without a network: for dry runs of a template and for
    ``verl-rewards check``. Rate limits (``rpm``, ``tpm``) are per worker process.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        template: str = DEFAULT_TEMPLATE,
        system: str | None = None,
        score_range: Sequence[float] = (0, 10),
        verdicts: Mapping[str, float] | None = None,
        request_timeout_s: float = 60.0,
        max_retries: int = 3,
        retry_backoff_s: float = 0.5,
        rpm: float | None = None,
        tpm: float | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        offline_reply: str | None = None,
    ) -> None:
        low, high = (float(x) for x in score_range)
        if not low < high:
            raise ValueError(f"llm_judge: score_range must be [low, high] with low < high, not {list(score_range)}")
        if max_retries < 0 or request_timeout_s <= 0 or retry_backoff_s < 0:
            raise ValueError("llm_judge: max_retries and retry_backoff_s must be >= 0, request_timeout_s > 0")
        self.base_url = base_url
        self.model = model
        self.template = check_template(template)
        self.score_label = score_label(template)
        self.system = system
        self.score_range = (low, high)
        self.verdicts = dict(verdicts) if verdicts else None
        self.max_retries = max_retries
        self.retry_backoff_s = retry_backoff_s
        self.max_tokens = max_tokens
        self.temperature = temperature
        self._limiter = RateLimiter(rpm, tpm)
        # openai loads in ~0.7 s: here, once per worker, not when a driver imports this
        # module to read the plugin's metadata.
        import openai

        self._openai = openai
        # APITimeoutError is a connection error.
        self._retriable = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)
        self.request_timeout_s = request_timeout_s
        http_client = (_offline_client(offline_reply, model) if offline_reply is not None
                       else _same_origin_client(openai, base_url, request_timeout_s))
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=os.environ.get(api_key_env) or _NO_KEY,
            timeout=_client_timeout_s(request_timeout_s), max_retries=0, http_client=http_client,
        )
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __call__(
        self, data_source: str, solution_str: str, ground_truth: Any,
        extra_info: Mapping[str, Any] | None = None, prompt: Any = None,
    ) -> dict[str, Any]:
        self._loop = asyncio.get_running_loop()
        messages = [{"role": "user", "content": render(self.template, prompt, solution_str, ground_truth)}]
        if self.system:
            messages.insert(0, {"role": "system", "content": self.system})
        reply = await self.ask(messages)
        try:
            score, value = parse_score(reply, self.score_range, self.verdicts, self.score_label)
        except JudgeReplyError as e:
            raise JudgeReplyError(f"llm_judge ({self.model} at {self.base_url}): {e}") from None
        return {"score": score, "judge_value": value}

    async def ask(self, messages: list[dict[str, str]]) -> str:
        """The reply to ``messages``, retrying transient failures within the rate limits."""
        estimate = sum(len(m["content"]) for m in messages) // 4 + self.max_tokens
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                await asyncio.sleep(self._backoff_s(attempt, last))
            await self._limiter.acquire(estimate)
            try:
                completion = await self._create(messages)
            except (*self._retriable, JudgeDeadlineError) as e:
                last = e
                continue
            except CrossOriginRedirectError as e:  # never retried: it would go the same way
                raise JudgeUnavailableError(f"llm_judge: {e}") from None
            except ValueError as e:  # a body that is not JSON
                raise JudgeReplyError(
                    f"llm_judge: {self.base_url} sent a malformed completion: {type(e).__name__}: {e}"
                ) from None
            except self._openai.APIStatusError as e:  # 4xx other than 429: retrying cannot help
                raise JudgeUnavailableError(
                    f"llm_judge: {self.base_url} refused the request: HTTP {e.status_code}: {e.message}"
                ) from None
            usage = getattr(completion, "usage", None)
            self._limiter.settle(estimate, getattr(usage, "total_tokens", None))
            return self._content(completion)
        raise JudgeUnavailableError(
            f"llm_judge: no answer from {self.base_url} after {self.max_retries + 1} attempt(s): "
            f"{type(last).__name__}: {last}"
        )

    async def _create(self, messages: list[dict[str, str]]) -> Any:
        """One chat completion, whole within ``request_timeout_s`` (the client's own
        timeouts are per read: a server dripping bytes would never trip them)."""
        request = self._client.chat.completions.create(
            model=self.model, messages=messages,  # type: ignore[arg-type]
            max_tokens=self.max_tokens, temperature=self.temperature,
        )
        try:
            return await asyncio.wait_for(request, self.request_timeout_s)
        except asyncio.TimeoutError:
            raise JudgeDeadlineError(
                f"no complete reply within request_timeout_s={self.request_timeout_s:g} s") from None

    def close(self) -> None:
        """Close the client's connections (called when the reward's pool stops)."""
        loop, self._loop = self._loop, None
        if loop is not None and loop.is_running():
            asyncio.run_coroutine_threadsafe(self._client.close(), loop).result(timeout=10)
        else:
            asyncio.run(self._client.close())

    def _content(self, completion: Any) -> str:
        try:
            content = completion.choices[0].message.content
        except (AttributeError, IndexError, KeyError, TypeError):
            content = None
        if not isinstance(content, str) or not content.strip():
            raise JudgeReplyError(
                f"llm_judge: {self.base_url} sent a malformed or empty completion: {str(completion)[:200]!r}"
            )
        return content

    def _backoff_s(self, attempt: int, error: Exception | None) -> float:
        retry_after = _retry_after_s(error) if isinstance(error, self._openai.APIStatusError) else None
        if retry_after is not None:
            return min(retry_after, _MAX_BACKOFF_S)
        delay: float = self.retry_backoff_s * 2.0 ** (attempt - 1)
        return min(_MAX_BACKOFF_S, delay) * random.uniform(0.5, 1.0)


def _retry_after_s(error: Any) -> float | None:
    value = error.response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:  # an HTTP date: fall back to exponential backoff
        return None


def _client_timeout_s(request_timeout_s: float) -> float:
    """The HTTP client's per-read timeout: past the request's whole deadline, which ends it first."""
    return request_timeout_s + 1.0


def _same_origin_client(openai: Any, base_url: str, request_timeout_s: float) -> httpx2.AsyncClient:
    """openai's default HTTP client, refusing to send a request (a redirect) to another origin:
    the prompt, response and ground truth go to ``base_url``'s host or nowhere."""
    import httpx2

    origin = _origin(httpx2.URL(base_url))

    async def same_origin(request: httpx2.Request) -> None:
        if _origin(request.url) != origin:
            raise CrossOriginRedirectError(
                f"{base_url} redirected to {request.url.scheme}://{request.url.netloc.decode()}; "
                f"not followed (a judge request goes only to base_url's origin): set base_url "
                f"to the address that answers")

    return openai.DefaultAsyncHttpxClient(timeout=_client_timeout_s(request_timeout_s),
                                          event_hooks={"request": [same_origin]})


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


def _offline_client(reply: str, model: str) -> httpx2.AsyncClient:
    """An HTTP client that answers every chat completion with ``reply``, offline."""
    import httpx2

    def handle(request: httpx2.Request) -> httpx2.Response:
        body = {
            "id": "offline", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply}}],
            "usage": {"prompt_tokens": len(request.content) // 4, "completion_tokens": len(reply) // 4,
                      "total_tokens": (len(request.content) + len(reply)) // 4},
        }
        return httpx2.Response(200, content=json.dumps(body).encode(),
                               headers={"content-type": "application/json"})

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handle))
