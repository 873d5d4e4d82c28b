"""slime adapter: ``--custom-rm-path verl_rewards.integrations.slime.reward``.

.. code-block:: bash

    export VERL_REWARDS_PLUGIN=gsm8k          # or VERL_REWARDS_CONFIG: a JSON object or a YAML file
    python train.py ... --custom-rm-path verl_rewards.integrations.slime.reward
    # with --group-rm, slime passes the whole group: the same function scores a list

slime awaits ``reward(args, sample, **kw)`` for one ``Sample`` (or a list of
them with ``--group-rm``) and takes a number per sample. The response is
``sample.response``, the ground truth ``sample.label``, the prompt
``sample.prompt``; ``sample.metadata`` gives the data source
(``metadata["data_source"]``, default ``slime``) and is the extra info.

slime's custom reward path has no timeout and no error handling of its own.
Here every sample is bounded by ``timeout_s`` and a failed sample scores
``error_score``; its status and error, and the reward's extra keys, are kept
in ``sample.metadata["verl_rewards"]``, where slime's later hooks (sample
filters, rollout logging) can read them. With ``on_error: skip`` a failed
sample is also marked ``sample.remove_sample = True``, slime's own way of
leaving a sample out of training. With ``on_error: raise`` the
``RewardError`` reaches slime. The samples of one call are scored as one
batch, off slime's event loop; slime is never imported here. See
``docs/integrations/slime.md``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from verl_rewards.integrations._common import score_batch
from verl_rewards.integrations._section import env_section, sample_result, scorer_for
from verl_rewards.samples import Sample, normalise_prompt

__all__ = ["METADATA_KEY", "reward", "sample_of"]

METADATA_KEY = "verl_rewards"  # sample.metadata[METADATA_KEY]: status, error and extra keys
DEFAULT_DATA_SOURCE = "slime"


async def reward(args: Any, sample_or_samples: Any, **kw: Any) -> float | list[float]:
    """slime's custom reward: a float for one sample, a list of floats for a list."""
    many = isinstance(sample_or_samples, Sequence) and not isinstance(sample_or_samples, str)
    samples = list(sample_or_samples) if many else [sample_or_samples]
    scores = await asyncio.to_thread(_score, samples)
    return scores if many else scores[0]


def _score(samples: list[Any]) -> list[float]:
    scorer = scorer_for(env_section(), "slime")
    result = score_batch(scorer, [sample_of(s) for s in samples])
    skip = scorer.config.on_error == "skip"
    for i, sample in enumerate(samples):
        one = sample_result(result, i)
        if isinstance(getattr(sample, "metadata", None), dict):
            sample.metadata[METADATA_KEY] = {"status": one.status, "error": one.error, **one.extra}
        if skip and one.status != "ok":
            sample.remove_sample = True  # slime's own way to leave a sample out of training
    return list(result.scores)


def sample_of(sample: Any) -> Sample:
    """The plugin's sample for a slime ``Sample``."""
    metadata = getattr(sample, "metadata", None)
    metadata = metadata if isinstance(metadata, Mapping) else {}
    source = metadata.get("data_source")
    extra = {k: v for k, v in metadata.items() if k != METADATA_KEY}
    return Sample(
        DEFAULT_DATA_SOURCE if source is None else str(source),
        str(getattr(sample, "response", "") or ""),
        getattr(sample, "label", None),
        extra,
        normalise_prompt(getattr(sample, "prompt", None)),
    )
