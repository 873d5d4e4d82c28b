"""Input samples: the same fields as a row of the CLI's input file."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from .errors import ConfigError, SampleError
from .parsing import as_python, json_value

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
    items = as_python(value)
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


# -- OpenRLHF's batch as samples: what its reward file and serve's POST /openrlhf share --------

OPENRLHF_DATA_SOURCE = "openrlhf"
STRIP_ENV = "VERL_REWARDS_STRIP"

# Decoded with special tokens, a response ends with its end-of-sequence marker
# (and maybe padding); rewards written for verl expect clean text.
DEFAULT_STRIP = (
    "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<|end|>", "</s>",
    "<eos>", "<end_of_turn>", "<pad>", "<\uff5cend\u2581of\u2581sentence\uff5c>",
)

logger = logging.getLogger("verl_rewards.integrations")


class OpenRLHFBatching(NamedTuple):
    """How an OpenRLHF batch becomes samples."""

    data_source: str = OPENRLHF_DATA_SOURCE  # every sample's (what a route matches)
    strip: tuple[str, ...] = DEFAULT_STRIP  # end markers removed from each response


def openrlhf_samples(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any],
                     batching: OpenRLHFBatching = OpenRLHFBatching()) -> list[Sample]:
    """One sample per OpenRLHF query: the response is the query after its prompt (end
    markers removed), the label the ground truth, the prompt the sample's prompt and, as
    the reward file has always passed it, its ``extra_info`` (``{"prompt": prompt}``)."""
    return [Sample(batching.data_source, response_of(q, p, batching.strip), label,
                   {"prompt": p} if p else None, normalise_prompt(p))
            for q, p, label in zip(queries, prompts, labels)]


def response_of(query: str, prompt: str, strip: Sequence[str] = DEFAULT_STRIP) -> str:
    """The response in ``query``: the text after ``prompt``, end markers removed."""
    start = query.find(prompt) if prompt else -1
    if start < 0:  # the decoded prompt differs from the original (truncated, normalised)
        if prompt and not _warned_prompt_not_found:
            _warned_prompt_not_found.append(True)
            logger.warning("a prompt was not found in its OpenRLHF query (truncated, or "
                           "changed by decoding); such responses are scored as the whole query")
        response = query
    else:
        response = query[start + len(prompt):]
    return strip_suffixes(response, strip)


_warned_prompt_not_found: list[bool] = []  # warn once per process


def strip_suffixes(text: str, suffixes: Sequence[str]) -> str:
    """``text`` without any trailing run of ``suffixes`` (and whitespace between them)."""
    while True:
        trimmed = text.rstrip()
        for suffix in suffixes:
            if suffix and trimmed.endswith(suffix):
                text = trimmed[: -len(suffix)]
                break
        else:
            return text


def strip_from_env(env: Mapping[str, str]) -> tuple[str, ...]:
    """``VERL_REWARDS_STRIP`` (a JSON list of strings), else :data:`DEFAULT_STRIP`."""
    text = env.get(STRIP_ENV, "")
    if not text.strip():
        return DEFAULT_STRIP
    value = json_value(text, STRIP_ENV, object, ConfigError)
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise ConfigError(f"{STRIP_ENV} must be a JSON list of strings, not {text!r:.200}")
    return tuple(value)
