"""OpenRLHF's batch as samples: the one function the reward file
(``openrlhf_reward.py``) and serve's ``POST /openrlhf`` both build samples with."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..errors import ConfigError
from ..samples import Sample, normalise_prompt

__all__ = ["DEFAULT_DATA_SOURCE", "DEFAULT_STRIP", "STRIP_ENV", "Batching", "response_of",
           "samples_of", "strip_from_env", "strip_suffixes"]

DEFAULT_DATA_SOURCE = "openrlhf"
STRIP_ENV = "VERL_REWARDS_STRIP"

# Decoded with special tokens, a response ends with its end-of-sequence marker
# (and maybe padding); rewards written for verl expect clean text.
DEFAULT_STRIP = (
    "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<|end|>", "</s>",
    "<eos>", "<end_of_turn>", "<pad>", "<\uff5cend\u2581of\u2581sentence\uff5c>",
)

logger = logging.getLogger("verl_rewards.integrations")


class Batching(NamedTuple):
    """How an OpenRLHF batch becomes samples."""

    data_source: str = DEFAULT_DATA_SOURCE  # every sample's (what a route matches)
    strip: tuple[str, ...] = DEFAULT_STRIP  # end markers removed from each response


def samples_of(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any],
               batching: Batching = Batching()) -> list[Sample]:
    """One sample per query: the response is the query after its prompt (end markers
    removed), the label the ground truth, the prompt the sample's prompt and, as the
    reward file has always passed it, its ``extra_info`` (``{"prompt": prompt}``)."""
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
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{STRIP_ENV} is not valid JSON ({e}): {text!r:.200}") from e
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise ConfigError(f"{STRIP_ENV} must be a JSON list of strings, not {text!r:.200}")
    return tuple(value)
