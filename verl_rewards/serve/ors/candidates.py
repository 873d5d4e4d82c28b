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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from openreward.environments.types import ScoreGroup

ROLES = frozenset({"system", "user", "assistant"})  # a text block is valid in each
REQUEST_KEYS = frozenset({"candidates", "task_id"})
CANDIDATE_KEYS = frozenset({"messages", "metadata"})
MESSAGE_KEYS = frozenset({"role", "blocks", "detail"})
TEXT_BLOCK_KEYS = frozenset({"text", "detail", "type"})


class GroupRequest(NamedTuple):
    """What ``score_group`` needs of its request."""

    answers: list[str]
    task_id: str | None


def group_request(body: Any) -> GroupRequest:
    """The request's answers and ``task_id``; ``pydantic.ValidationError`` (from the
    package's model) when the body is not a valid ``ScoreGroup``."""
    plain = plain_answers(body)
    if plain is not None:
        return plain
    model = ScoreGroup.model_validate(body)
    return GroupRequest([final_text(c.messages) for c in model.candidates], model.task_id)


def plain_answers(body: Any) -> GroupRequest | None:
    """The answers of a request whose candidates hold only text blocks, every field of
    the type ``ScoreGroup`` requires; ``None`` for any other body (the model decides)."""
    if type(body) is not dict or not body.keys() <= REQUEST_KEYS:
        return None
    candidates, task_id = body.get("candidates"), body.get("task_id")
    if type(candidates) is not list or not (task_id is None or type(task_id) is str):
        return None
    answers = []
    for candidate in candidates:
        if (type(candidate) is not dict or not candidate.keys() <= CANDIDATE_KEYS
                or not _object_or_none(candidate.get("metadata"))):
            return None
        answer = _last_assistant_text(candidate.get("messages"))
        if answer is None:
            return None
        answers.append(answer)
    return GroupRequest(answers, task_id)


def _last_assistant_text(messages: Any) -> str | None:
    """The text of the last assistant message, ``""`` when there is none; ``None`` when
    a message is not one of text blocks only."""
    if type(messages) is not list:
        return None
    answer = ""
    for message in messages:
        if (type(message) is not dict or not message.keys() <= MESSAGE_KEYS
                or not _object_or_none(message.get("detail"))):
            return None
        role, blocks = message.get("role"), message.get("blocks")
        if type(role) is not str or role not in ROLES or type(blocks) is not list:
            return None
        texts = []
        for block in blocks:
            if (type(block) is not dict or block.get("type") != "text" or not block.keys() <= TEXT_BLOCK_KEYS
                    or type(block.get("text")) is not str or not _object_or_none(block.get("detail"))):
                return None
            texts.append(block["text"])
        if role == "assistant":
            answer = "".join(texts)
    return answer


def _object_or_none(value: Any) -> bool:
    # A JSON object is always a valid JSONObject: its keys are text, its values JSON.
    return value is None or type(value) is dict


def final_text(messages: Sequence[Any]) -> str:
    """The text of the last assistant message (its text blocks joined), or ``""``."""
    for message in reversed(messages):
        if message.role == "assistant":
            return "".join(b.text for b in message.blocks if getattr(b, "type", None) == "text")
    return ""
