"""The wire protocols: request JSON -> samples, batch result -> response JSON.

Pure functions, no HTTP: each protocol is a :class:`Protocol` record with a
parser (raising :class:`BadRequest` naming the field at fault) and a
formatter. Nothing a request sends chooses a plugin, a file or kwargs.
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from ..config import OnError
from ..errors import BadRequest, SampleError
from ..hosts import HOSTS as SKIP_POLICY
from ..hosts import refusal
from ..results import BatchResult
from ..samples import (
    DEFAULT_STRIP,
    OPENRLHF_DATA_SOURCE,
    REQUIRED,
    OpenRLHFBatching,
    Sample,
    as_samples,
    normalise_prompt,
    openrlhf_samples,
    strip_from_env,
)
from ..wire import result_to_json


class Parsed(NamedTuple):
    """A request's samples and what its response needs from the request."""

    samples: list[Sample]
    request: Any = None


class Answer(NamedTuple):
    """A response: its JSON value and the headers that go with it."""

    body: Any
    headers: Mapping[str, str] = {}


class Protocol(NamedTuple):
    """One endpoint's request parser and response formatter."""

    name: str
    parse: Callable[[Any, str | None], Parsed]  # (body, data_source) -> samples
    format: Callable[[Parsed, BatchResult], Answer]
    host: str = ""  # its row in the on_error: skip table (hosts.py)


def _body_only(format_body: Callable[[Parsed, BatchResult], Any]) -> Callable[[Parsed, BatchResult], Answer]:
    return lambda parsed, result: Answer(format_body(parsed, result))


def _object(body: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise BadRequest(400, f"the {what} body must be a JSON object, not {_json_type(body)}")
    return body


def _required(body: Mapping[str, Any], names: Sequence[str], what: str) -> None:
    missing = [n for n in names if n not in body]
    if missing:
        raise BadRequest(422, f"the {what} request is missing field(s) {', '.join(map(repr, missing))}"
                              f"{did_you_mean(missing, body, names)}")


def did_you_mean(missing: Sequence[str], given: Mapping[str, Any], known: Sequence[str] = ()) -> str:
    """``; did you mean 'solution_str' (not 'solution')?`` for the given keys that look like
    misspellings of missing fields, else ``""``."""
    unknown = [k for k in given if isinstance(k, str) and k not in known]
    hints = []
    for name in missing:
        close = difflib.get_close_matches(name, unknown, n=1, cutoff=0.6)
        if close:
            hints.append(f"'{name}' (not '{close[0]}')")
    return f"; did you mean {' and '.join(hints)}?" if hints else ""


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


# -- native: POST /v1/score -------------------------------------------------

SAMPLE_FIELDS = (*REQUIRED, "extra_info", "prompt")


def parse_native(body: Any, data_source: str | None) -> Parsed:
    body = _object(body, "/v1/score")
    _required(body, ["samples"], "/v1/score")
    rows = body["samples"]
    if not isinstance(rows, list):
        raise BadRequest(422, f"'samples' must be an array of sample objects, not {_json_type(rows)}")
    try:
        return Parsed(as_samples(rows))
    except SampleError as e:
        row = rows[e.index]
        missing = [f for f in REQUIRED if isinstance(row, Mapping) and f not in row]
        hint = did_you_mean(missing, row, SAMPLE_FIELDS) if missing else ""
        raise BadRequest(422, f"samples[{e.index}]: {str(e).removeprefix(f'sample {e.index}: ')}"
                              f"{hint}") from e


def format_native(parsed: Parsed, result: BatchResult) -> dict[str, Any]:
    return result_to_json(result)


# -- OpenRLHF 0.11: POST /openrlhf ------------------------------------------


def parse_openrlhf(body: Any, data_source: str | None,
                   strip: tuple[str, ...] = DEFAULT_STRIP) -> Parsed:
    """``{"query": [...], "prompts": [...], "labels": [...]}``; each query is prompt + response
    as OpenRLHF decodes it (special tokens kept): only the response after the prompt is scored,
    with the samples the OpenRLHF reward file builds (``samples.openrlhf_samples``)."""
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
    return Parsed(openrlhf_samples(queries, prompts, labels,
                                   OpenRLHFBatching(data_source or OPENRLHF_DATA_SOURCE, strip)))


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
    prompt = normalise_prompt(body.get("prompt"))
    return Parsed([Sample(data_source or "slime", body["response"], body["label"], None, prompt)])


def format_slime(parsed: Parsed, result: BatchResult) -> float:
    return result.scores[0]


def answer_slime(parsed: Parsed, result: BatchResult) -> Answer:
    """slime reads a bare number: a failed sample's status and error go in headers."""
    if result.statuses[0] == "ok":
        return Answer(format_slime(parsed, result))
    return Answer(format_slime(parsed, result),
                  {"X-Verl-Rewards-Status": result.statuses[0],
                   "X-Verl-Rewards-Error": _header_safe(result.errors[0] or "")})


def _header_safe(text: str) -> str:
    return " ".join(text.split())[:512].encode("ascii", "replace").decode()


# -- NeMo-Gym resources server: POST /nemo_gym/verify, /seed_session ----------

GROUND_TRUTH_FIELDS = ("expected_answer", "ground_truth")
FAILURE_KIND = "verifier_error"  # NeMo-Gym's shared name (nemo_gym.failure_kinds) for a failed verifier


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
    prompt = normalise_prompt(params.get("input")) if isinstance(params, Mapping) else None
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


def format_nemo_gym(parsed: Parsed, result: BatchResult, mask_failed: bool = False) -> dict[str, Any]:
    """The request echoed with ``reward`` (NeMo-Gym's ``BaseVerifyResponse``); a failed sample
    also names why (``failure_kind``, ``failure_reason``) and, under ``on_error: skip``
    (``mask_failed``), is masked (``mask_sample``: its reward is not a valid measurement)."""
    answer = {**parsed.request, "reward": result.scores[0]}
    if result.statuses[0] != "ok":
        answer["failure_kind"] = FAILURE_KIND
        answer["failure_reason"] = result.errors[0]
        if mask_failed:
            answer["mask_sample"] = True
    answer["verl_rewards"] = {"status": result.statuses[0], "error": result.errors[0],
                              "extra_info": {k: v[0] for k, v in result.extra_info.items()}}
    return answer


def parse_seed_session(body: Any, data_source: str | None) -> Parsed:
    """NeMo-Gym's ``/seed_session``: a JSON object (or nothing); the service keeps no session."""
    if body is not None:
        _object(body, "/seed_session")
    return Parsed([])


def protocols_for(on_error: OnError, env: Mapping[str, str] | None = None) -> dict[str, Protocol]:
    """Each endpoint's protocol for a service whose reward section says ``on_error``: under
    skip, an endpoint whose host cannot leave one sample out answers every request 409 naming
    what to use (``hosts.py``), and NeMo-Gym's masks a failed sample.
    ``env`` (default: this process's) may set ``VERL_REWARDS_STRIP``, as for the OpenRLHF file."""
    strip = strip_from_env(os.environ if env is None else env)
    skip = on_error == "skip"
    protocols = {
        "/v1/score": Protocol("native", parse_native, _body_only(format_native), "serve_native"),
        "/openrlhf": Protocol("openrlhf", functools.partial(parse_openrlhf, strip=strip),
                              _body_only(format_openrlhf), "serve_openrlhf"),
        "/slime": Protocol("slime", parse_slime, answer_slime, "serve_slime"),
        "/nemo_gym/verify": Protocol("nemo_gym", parse_nemo_gym,
                                     _body_only(functools.partial(format_nemo_gym, mask_failed=skip)),
                                     "serve_nemo_gym"),
    }
    return {path: _refusing(p) if skip and SKIP_POLICY[p.host].policy == "refuse" else p
            for path, p in protocols.items()}


def refused_endpoints(on_error: OnError) -> list[str]:
    """The endpoints that answer every request 409 under ``on_error`` (for the start-up message)."""
    return [path for path, p in protocols_for("score", {}).items()
            if on_error == "skip" and SKIP_POLICY[p.host].policy == "refuse"]


def _refusing(protocol: Protocol) -> Protocol:
    message = refusal(protocol.host)

    def parse(body: Any, data_source: str | None) -> Parsed:
        raise BadRequest(409, message)

    return protocol._replace(parse=parse)


PROTOCOLS: dict[str, Protocol] = protocols_for("score", {})  # the service with on_error: score
