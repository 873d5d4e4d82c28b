"""``score_group``'s request: the answer of each candidate (the text of its last assistant
message) and the ``task_id`` it may resume.

The ``openreward`` package's ``ScoreGroup`` model is the protocol's definition of the
request, and a slow one to check: every block is tried against each of its five block
models, and each message runs a Python validator (about 50 us a candidate, 13 ms for
256). Candidates made only of text blocks, the shape trainers send, are read straight
from the JSON here: :func:`plain_answers` accepts a request only when every field is one
``ScoreGroup`` accepts, with the type it requires; anything else (other block types,
unknown fields, a wrong type) goes through the model, which accepts it or names what is
wrong exactly as before.

The request's depth is checked in the same walk (the service refuses JSON nested
deeper than its limit): only the ``metadata`` and ``detail`` objects, whose depth the
format leaves open, are walked for it; a body the walk does not accept is checked as
a whole by the route before the model sees it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from openreward.environments.types import ScoreGroup

from ..intake import deeper_than

ROLES = frozenset({"system", "user", "assistant"})  # a text block is valid in each
REQUEST_KEYS = frozenset({"candidates", "task_id"})
CANDIDATE_KEYS = frozenset({"messages", "metadata"})
MESSAGE_KEYS = frozenset({"role", "blocks", "detail"})
TEXT_BLOCK_KEYS = frozenset({"text", "detail", "type"})


class GroupRequest(NamedTuple):
    """What ``score_group`` needs of its request."""

    answers: list[str]
    task_id: str | None


def model_request(body: Any) -> GroupRequest:
    """The request read by the package's model; ``pydantic.ValidationError`` when it is
    not a valid ``ScoreGroup``."""
    model = ScoreGroup.model_validate(body)
    return GroupRequest([final_text(c.messages) for c in model.candidates], model.task_id)


def plain_answers(body: Any, max_depth: int) -> GroupRequest | None:
    """The answers of a request whose candidates hold only text blocks, every field of
    the type ``ScoreGroup`` requires and nothing nested deeper than ``max_depth``
    (checked in the same walk: the request's own levels are fixed, only ``metadata`` and
    ``detail`` objects are walked for it); ``None`` for any other body."""
    if type(body) is not dict or not body.keys() <= REQUEST_KEYS:
        return None
    candidates, task_id = body.get("candidates"), body.get("task_id")
    if type(candidates) is not list or not (task_id is None or type(task_id) is str):
        return None
    answers = []
    for candidate in candidates:  # at depth 3
        if type(candidate) is not dict or not candidate.keys() <= CANDIDATE_KEYS:
            return None
        metadata = candidate.get("metadata")
        if metadata is not None and not _plain_object(metadata, max_depth - 3):
            return None
        answer = _last_assistant_text(candidate.get("messages"), max_depth)
        if answer is None:
            return None
        answers.append(answer)
    return GroupRequest(answers, task_id)


def _last_assistant_text(messages: Any, max_depth: int) -> str | None:
    """The text of the last assistant message (messages at depth 4), ``""`` when there is
    none; ``None`` when a message is not one of text blocks only. (The ``is None`` tests
    before each :func:`_plain_object` only spare a call: this runs for every message.)"""
    if type(messages) is not list:
        return None
    answer = ""
    for message in messages:  # at depth 5
        if type(message) is not dict or not message.keys() <= MESSAGE_KEYS:
            return None
        role, blocks, detail = message.get("role"), message.get("blocks"), message.get("detail")
        if (type(role) is not str or role not in ROLES or type(blocks) is not list
                or (detail is not None and not _plain_object(detail, max_depth - 5))):
            return None
        texts = []
        for block in blocks:  # at depth 7
            if type(block) is not dict or block.get("type") != "text" or not block.keys() <= TEXT_BLOCK_KEYS:
                return None
            text, detail = block.get("text"), block.get("detail")
            if type(text) is not str or (detail is not None and not _plain_object(detail, max_depth - 7)):
                return None
            texts.append(text)
        if role == "assistant":
            answer = "".join(texts)
    return answer


def _plain_object(value: Any, max_depth: int) -> bool:
    """Whether ``value`` (a ``detail`` or ``metadata``) is null, or an object nested at
    most ``max_depth`` deep. A JSON object is always a valid ``JSONObject``: its keys are
    text, its values JSON."""
    return value is None or (type(value) is dict and not deeper_than(value, max_depth))


def final_text(messages: Sequence[Any]) -> str:
    """The text of the last assistant message (its text blocks joined), or ``""``."""
    for message in reversed(messages):
        if message.role == "assistant":
            return "".join(b.text for b in message.blocks if getattr(b, "type", None) == "text")
    return ""
