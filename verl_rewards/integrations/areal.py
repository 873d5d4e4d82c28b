"""AReaL 1.0 adapter: a plugin as the ``reward_fn`` of AReaL's RLVR workflows.

.. code-block:: python

    from areal.api.reward_api import AsyncRewardWrapper
    from verl_rewards.integrations.areal import reward_fn

    gsm8k = reward_fn("gsm8k", timeout_s=10)          # or reward_fn({"plugin": ..., ...})
    workflow = RLVRWorkflow(reward_fn=gsm8k, ...)     # AReaL wraps it in AsyncRewardWrapper

AReaL's ``RLVRWorkflow`` also takes the function by import string:
``reward_fn="verl_rewards.integrations.areal.reward"`` scores with the reward
``VERL_REWARDS_PLUGIN`` (or ``VERL_REWARDS_CONFIG``) selects.

AReaL calls ``reward_fn(prompt, completions, prompt_ids, completion_ids,
**row)`` (``completions`` is one response's text, ``row`` the dataset row's
other columns) in a process pool, so the function must pickle: the object
returned here pickles as its reward section (a few hundred bytes), and each
pool process builds the reward itself, once. The ground truth is
``row["answer"]`` (configurable), the data source ``row["data_source"]`` and
the extra info ``row["extra_info"]`` when present.

AReaL's wrapper retries a raising reward 3 times and then fails the episode,
and on its own timeout returns 0 while the call keeps running in the pool.
Here a failed sample (raised, bad value, over ``timeout_s``) returns
``error_score`` at once, logged with its error: set ``timeout_s`` below the
wrapper's ``timeout_seconds`` (15 s by default) so that ours decides. With
``on_error: raise`` the ``RewardError`` goes to AReaL (which retries it).
With ``on_error: skip`` a failed sample raises ``SkippedSample``: AReaL's
wrapper retries it, then re-raises, and AReaL rejects the episode (never
trained on; ``docs/skip.md``). AReaL itself is never imported here. See
``docs/integrations/areal.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl_rewards.errors import SkippedSample
from verl_rewards.integrations._common import score_batch, to_container
from verl_rewards.integrations._section import (
    Reward,
    env_section,
    reward_name,
    scorer_for,
    section_of,
)
from verl_rewards.samples import Sample, normalise_prompt

__all__ = ["ArealReward", "reward", "reward_fn"]

DEFAULT_DATA_SOURCE = "areal"


class ArealReward:
    """AReaL's reward function over a verl-rewards section: a small, picklable reference."""

    def __init__(self, section: Mapping[str, Any], name: str, answer_key: str = "answer",
                 data_source_key: str = "data_source", extra_info_key: str = "extra_info",
                 data_source: str = DEFAULT_DATA_SOURCE) -> None:
        self.__name__ = self.__qualname__ = name  # AReaL's logs name the reward by it
        self.section = dict(section)
        self.answer_key = answer_key
        self.data_source_key = data_source_key
        self.extra_info_key = extra_info_key
        self.data_source = data_source  # when the row has no data source

    def __repr__(self) -> str:
        return f"ArealReward({self.__name__})"

    def __call__(self, prompt: Any, completions: str, prompt_ids: Any = None,
                 completion_ids: Any = None, **row: Any) -> float:
        scorer = scorer_for(self.section, "areal")  # once per process: AReaL's pool workers too
        result = score_batch(scorer, [self.sample(prompt, completions, row)])
        if scorer.config.on_error == "skip" and not result.trainable[0]:
            # AReaL rejects an episode whose reward raises (after its wrapper's retries).
            raise SkippedSample(scorer.ref.display_name, str(result.errors[0]))
        return result.scores[0]

    def sample(self, prompt: Any, completion: str, row: Mapping[str, Any]) -> Sample:
        """The plugin's sample for one AReaL call."""
        source = row.get(self.data_source_key)
        info = row.get(self.extra_info_key)
        return Sample(
            self.data_source if source is None else str(source), str(completion),
            row.get(self.answer_key), dict(info) if isinstance(info, Mapping) else None,
            normalise_prompt(prompt),
        )


def reward(prompt: Any, completions: str, prompt_ids: Any = None, completion_ids: Any = None,
           **row: Any) -> float:
    """AReaL's reward function by import string (``reward_fn:
    verl_rewards.integrations.areal.reward`` in a workflow's config): the reward
    ``VERL_REWARDS_PLUGIN`` / ``VERL_REWARDS_CONFIG`` select, with the default row keys."""
    return ArealReward(env_section(), "verl_rewards")(prompt, completions, prompt_ids,
                                                      completion_ids, **row)


def reward_fn(
    reward: Reward, *, answer_key: str = "answer", data_source_key: str = "data_source",
    extra_info_key: str = "extra_info", data_source: str = DEFAULT_DATA_SOURCE,
    **options: Any,
) -> ArealReward:
    """AReaL's ``reward_fn`` scoring with ``reward`` (a plugin name or ``dist:name``, or
    a whole reward section); ``options`` are section keys (``kwargs``, ``timeout_s``,
    ``on_error``, ``error_score``, ...).

    The reward is imported and checked now, in the driver: a wrong name fails
    here, not in every rollout.
    """
    section = section_of(reward, options)
    name = reward_name(scorer_for(section, "areal"))
    return ArealReward(to_container(section), name, answer_key, data_source_key, extra_info_key,
                       data_source)
