"""Input samples: the same fields as a row of the CLI's input file."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from .errors import SampleError

REQUIRED = ("data_source", "solution_str", "ground_truth")

Prompt = str | Sequence[Mapping[str, Any]]  # text, or chat messages ({"role", "content"})


class Sample(NamedTuple):
    """One response to score."""

    data_source: str
    solution_str: str
    ground_truth: Any
    extra_info: Mapping[str, Any] | None = None
    # What the response answers: text, or chat messages. Passed only to rewards
    # whose signature names ``prompt`` (sample shape) or ``prompts`` (batch shape).
    prompt: Prompt | None = None


SampleLike = Sample | Mapping[str, Any]


def as_samples(rows: Iterable[SampleLike]) -> list[Sample]:
    """Coerce mappings (or :class:`Sample` records) into samples, checking fields.

    Raises :class:`SampleError` naming the first malformed row's index.
    """
    return [_as_sample(i, row) for i, row in enumerate(rows)]


def contiguous_runs(indices: Iterable[int]) -> list[list[int]]:
    """Split ascending sample indices into runs of consecutive ones.

    A run can be scored as one call whose first index locates every sample,
    so errors name each sample's true position in the batch.
    """
    runs: list[list[int]] = []
    for i in indices:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _as_sample(index: int, row: SampleLike) -> Sample:
    if type(row) is dict:  # fast path for the common case: a well-formed plain dict
        try:
            extra = row.get("extra_info")
            prompt = row.get("prompt")
            sample = Sample(row["data_source"], row["solution_str"], row["ground_truth"], extra, prompt)
        except KeyError:
            sample = None
        if (sample is not None and type(sample.solution_str) is str
                and (extra is None or type(extra) is dict) and (prompt is None or (type(prompt) is str and prompt))):
            return sample
    if isinstance(row, Sample):
        return row
    if not isinstance(row, Mapping):
        raise SampleError(index, f"expected a mapping with {', '.join(REQUIRED)}, got {type(row).__name__}")
    missing = [k for k in REQUIRED if k not in row]
    if missing:
        raise SampleError(index, f"missing required field(s) {', '.join(missing)}")
    if not isinstance(row["solution_str"], str):
        raise SampleError(index, f"solution_str must be a string, not {type(row['solution_str']).__name__}")
    extra = row.get("extra_info")
    if extra is not None and not isinstance(extra, Mapping):
        raise SampleError(index, f"extra_info must be a mapping or null, not {type(extra).__name__}")
    return Sample(row["data_source"], row["solution_str"], row["ground_truth"], extra,
                  _prompt(index, row.get("prompt")))


def _prompt(index: int, prompt: Any) -> Prompt | None:
    """A row's prompt (see :func:`normalise_prompt`), or :class:`SampleError` naming the row."""
    try:
        return normalise_prompt(prompt, strict=True)
    except ValueError as e:
        raise SampleError(index, str(e)) from None


def normalise_prompt(value: Any, *, strict: bool = False) -> Prompt | None:
    """A sample's prompt from what a row or a host gives: the one rule for every entry point.

    * ``None``, empty text or no messages: ``None`` (no prompt);
    * text: as given;
    * chat messages (a list, tuple or array of mappings that each have ``role`` and
      ``content``): a list of plain dicts, each ``content`` made text
      (:func:`message_text`: content parts' text joined, ``None`` as ``""``).

    Anything else is no prompt (``None``); with ``strict`` (an input row) it is a
    :class:`ValueError` saying what it got. Leniently, a list's items that are not
    messages (a Responses-API tool call, say) are left out.
    """
    if value is None or isinstance(value, str):
        return value or None
    items = value.tolist() if callable(getattr(value, "tolist", None)) else value
    if isinstance(items, (list, tuple)):
        if not items:
            return None
        messages = [m for m in items if isinstance(m, Mapping) and "role" in m and "content" in m]
        if messages and (len(messages) == len(items) or not strict):
            return [{**m, "content": message_text(m["content"])} for m in messages]
    if strict:
        raise ValueError(f"prompt must be text, chat messages ([{{'role': ..., 'content': ...}}]) "
                         f"or null, not {type(value).__name__} {value!r:.80}")
    return None


def message_text(content: Any) -> str:
    """A chat message's content as text: itself, or its parts' text joined (multimodal
    parts without text add nothing); ``None`` is ``""``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        content = [content]
    if isinstance(content, (list, tuple)):
        return "".join(_part_text(part) for part in content)
    return str(content)


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    text = part.get("text") if isinstance(part, Mapping) else None
    return text if isinstance(text, str) else ""
