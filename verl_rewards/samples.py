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
                and (extra is None or type(extra) is dict) and (prompt is None or type(prompt) is str)):
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
    """A prompt as given (text or chat messages), or :class:`SampleError`."""
    if prompt is None or isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence) and not isinstance(prompt, bytes) and all(
        isinstance(m, Mapping) and "role" in m and "content" in m for m in prompt
    ):
        return [dict(m) for m in prompt]
    raise SampleError(
        index, f"prompt must be text, chat messages ([{{'role': ..., 'content': ...}}]) or null, "
               f"not {type(prompt).__name__} {prompt!r:.80}"
    )
