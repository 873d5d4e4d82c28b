"""The wire protocols: request JSON -> samples, batch result -> response JSON.

Pure functions, no HTTP: each protocol is a :class:`Protocol` record with a
parser (raising :class:`BadRequest` naming the field at fault) and a
formatter. Nothing a request sends chooses a plugin, a file or kwargs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from ..errors import SampleError
from ..integrations.openrlhf_reward import DEFAULT_STRIP, response_of
from ..results import BatchResult
from ..samples import Sample, as_samples
from ..wire import result_to_json


class BadRequest(Exception):
    """A request the service cannot score; ``status`` is its HTTP code."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.message = message
        super().__init__(message)


class Parsed(NamedTuple):
    """A request's samples and what its response needs from the request."""

    samples: list[Sample]
    request: Any = None


class Protocol(NamedTuple):
    """One endpoint's request parser and response formatter."""

    name: str
    parse: Callable[[Any, str | None], Parsed]  # (body, data_source) -> samples
    format: Callable[[Parsed, BatchResult], Any]


def _object(body: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise BadRequest(400, f"the {what} body must be a JSON object, not {_json_type(body)}")
    return body


def _required(body: Mapping[str, Any], names: Sequence[str], what: str) -> None:
    missing = [n for n in names if n not in body]
    if missing:
        raise BadRequest(422, f"the {what} request is missing field(s) {', '.join(map(repr, missing))}")


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


# -- native: POST /v1/score -------------------------------------------------


def parse_native(body: Any, data_source: str | None) -> Parsed:
    body = _object(body, "/v1/score")
    _required(body, ["samples"], "/v1/score")
    rows = body["samples"]
    if not isinstance(rows, list):
        raise BadRequest(422, f"'samples' must be an array of sample objects, not {_json_type(rows)}")
    try:
        return Parsed(as_samples(rows))
    except SampleError as e:
        raise BadRequest(422, f"samples[{e.index}]: {str(e).removeprefix(f'sample {e.index}: ')}") from e


def format_native(parsed: Parsed, result: BatchResult) -> dict[str, Any]:
    return result_to_json(result)


# -- OpenRLHF 0.11: POST /openrlhf ------------------------------------------


def parse_openrlhf(body: Any, data_source: str | None) -> Parsed:
    """``{"query": [...], "prompts": [...], "labels": [...]}``; each query is prompt + response
    as OpenRLHF decodes it (special tokens kept): only the response after the prompt is scored."""
    body = _object(body, "/openrlhf")
    _required(body, ["query", "labels"], "/openrlhf")
    queries, labels = body["query"], body["labels"]
    prompts = body.get("prompts")
    if prompts is None:
        prompts = [""] * len(queries) if isinstance(queries, list) else None
    for name, value in (("query", queries), ("prompts", prompts), ("labels", labels)):
        if not isinstance(value, list):
            raise BadRequest(422, f"'{name}' must be an array, not {_json_type(value)}")
    if not (len(queries) == len(prompts) == len(labels)):
        raise BadRequest(422, f"'query', 'prompts' and 'labels' must have one entry per sample; "
                              f"got {len(queries)}, {len(prompts)} and {len(labels)}")
    for i, (q, p) in enumerate(zip(queries, prompts)):
        if not isinstance(q, str) or not isinstance(p, str):
            bad = "query" if not isinstance(q, str) else "prompts"
            raise BadRequest(422, f"'{bad}[{i}]' must be a string")
    source = data_source or "openrlhf"
    return Parsed([Sample(source, response_of(q, p, DEFAULT_STRIP), label, None, p or None)
                   for q, p, label in zip(queries, prompts, labels)])


def format_openrlhf(parsed: Parsed, result: BatchResult) -> dict[str, Any]:
    # Fixed extra_logs keys: OpenRLHF concatenates them across samples key by key.
    failed = [float(s != "ok") for s in result.statuses]
    return {"rewards": result.scores, "scores": result.scores,
            "extra_logs": {"reward_failed": failed}}


# -- slime: POST /slime -----------------------------------------------------


def parse_slime(body: Any, data_source: str | None) -> Parsed:
    """slime's ``remote_rm`` payload ``{"prompt", "response", "label"}``."""
    body = _object(body, "/slime")
    _required(body, ["response", "label"], "/slime")
    if not isinstance(body["response"], str):
        raise BadRequest(422, f"'response' must be a string, not {_json_type(body['response'])}")
    prompt = _prompt(body.get("prompt"))
    return Parsed([Sample(data_source or "slime", body["response"], body["label"], None, prompt)])


def format_slime(parsed: Parsed, result: BatchResult) -> float:
    return result.scores[0]


def _prompt(value: Any) -> str | list[dict[str, Any]] | None:
    """Text or chat messages as a sample's prompt; anything else is left out."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(m, Mapping) and "role" in m and "content" in m
                                       for m in value):
        return [{"role": m["role"], "content": _text(m["content"])} for m in value]
    return None


def _text(content: Any) -> str:
    """A message's content as text (Responses-API content parts joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


# -- NeMo-Gym resources server: POST /nemo_gym/verify, /seed_session ----------

GROUND_TRUTH_FIELDS = ("expected_answer", "ground_truth")


def parse_nemo_gym(body: Any, data_source: str | None) -> Parsed:
    """A NeMo-Gym ``BaseVerifyRequest``: ``responses_create_params`` (the prompt in
    ``input``), ``response`` (a Responses-API response) and the task's own fields
    (``expected_answer`` is the ground truth; ``verifier_metadata`` the extra info)."""
    body = _object(body, "/nemo_gym/verify")
    _required(body, ["responses_create_params", "response"], "/nemo_gym/verify")
    response = body["response"]
    if not isinstance(response, Mapping) or not isinstance(response.get("output"), list):
        raise BadRequest(422, "'response' must be a Responses-API response object with an "
                              "'output' array")
    params = body["responses_create_params"]
    prompt = _prompt(params.get("input")) if isinstance(params, Mapping) else None
    truth = next((body[f] for f in GROUND_TRUTH_FIELDS if f in body), None)
    meta = body.get("verifier_metadata")
    source = body.get("data_source") if isinstance(body.get("data_source"), str) else None
    sample = Sample(source or data_source or "nemo_gym", output_text(response), truth,
                    dict(meta) if isinstance(meta, Mapping) else None, prompt)
    return Parsed([sample], body)


def output_text(response: Mapping[str, Any]) -> str:
    """The text of a Responses-API response: its messages' ``output_text`` parts, joined."""
    parts = []
    for item in response.get("output") or ():
        if isinstance(item, Mapping) and item.get("type", "message") == "message":
            for part in item.get("content") or ():
                if isinstance(part, Mapping) and part.get("type") == "output_text":
                    parts.append(str(part.get("text", "")))
    return "".join(parts)


def format_nemo_gym(parsed: Parsed, result: BatchResult) -> dict[str, Any]:
    """The request echoed with ``reward``; a failed sample also names why in ``failure_reason``."""
    answer = {**parsed.request, "reward": result.scores[0]}
    if result.statuses[0] != "ok":
        answer["failure_reason"] = result.errors[0]
    answer["verl_rewards"] = {"status": result.statuses[0], "error": result.errors[0],
                              "extra_info": {k: v[0] for k, v in result.extra_info.items()}}
    return answer


def parse_seed_session(body: Any, data_source: str | None) -> Parsed:
    """NeMo-Gym's ``/seed_session``: a JSON object (or nothing); the service keeps no session."""
    if body is not None:
        _object(body, "/seed_session")
    return Parsed([])


PROTOCOLS: dict[str, Protocol] = {
    "/v1/score": Protocol("native", parse_native, format_native),
    "/openrlhf": Protocol("openrlhf", parse_openrlhf, format_openrlhf),
    "/slime": Protocol("slime", parse_slime, format_slime),
    "/nemo_gym/verify": Protocol("nemo_gym", parse_nemo_gym, format_nemo_gym),
}
