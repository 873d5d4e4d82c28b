"""verl-rewards as verl's reward manager (verl >= 0.9, ``RewardLoopManager``).

.. code-block:: bash

    reward.reward_manager.source=importlib \\
    reward.reward_manager.module.path=pkg://verl_rewards.integrations.verl \\
    reward.reward_manager.name=RewardManager \\
    +reward.verl_rewards.plugin=gsm8k +reward.verl_rewards.timeout_s=10

verl builds one :class:`RewardManager` in each of its reward-loop actors and
calls ``run_single`` once per sample, all samples of a batch at once. The
manager decodes each response as verl's naive manager does, gathers the calls
of one event-loop iteration into one batch, and scores it through the reward
section ``reward.verl_rewards`` describes (a plugin, a file, or ``rewards`` +
``route``; timeouts, crash isolation, per-sample errors). With ``executor:
ray`` (the default) every reward-loop actor of the job shares one pool of
``reward.verl_rewards.num_workers`` reward actors (``share_pool``, on by
default here); a pool the cluster can never place is refused when the
manager is built, naming the ``reward.verl_rewards.*`` keys to change.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from verl_rewards._inspect import RewardInfo
from verl_rewards.errors import ConfigError, SkippedSample
from verl_rewards.hosts import (
    TRAINABLE_KEY,
    check_skip,
    verl_leaves_out_failed_sessions,
)
from verl_rewards.integrations._batching import Microbatcher
from verl_rewards.integrations._common import started, to_container
from verl_rewards.results import BatchResult
from verl_rewards.samples import Sample, normalise_prompt
from verl_rewards.scorer import Scorer
from verl_rewards.token_rewards import decode_ids
from verl_rewards.wire import dumps

__all__ = ["RewardManager"]

logger = logging.getLogger("verl_rewards.integrations")


SECTION = "verl_rewards"  # reward.verl_rewards: the verl-rewards reward section
ERROR_KEY = "error"
# Under the section: with the default executor (ray), the job's reward-loop actors share one pool.
DEFAULTS: Mapping[str, Any] = {"share_pool": True}


class RewardManager(RewardManagerBase):
    """A verl reward manager that scores through verl-rewards."""

    def __init__(
        self, config: Any, tokenizer: Any, compute_score: Any = None,
        reward_router_address: str | None = None, reward_model_tokenizer: Any = None,
        **_: Any,
    ) -> None:
        super().__init__(config, tokenizer, compute_score)
        section, declared = section_config(config)
        scorer = Scorer.from_config(section, defaults=DEFAULTS)
        self.reward_config, self.spec = scorer.config, scorer.ref
        if not verl_leaves_out_failed_sessions(config):  # a raise there would fail the whole batch
            check_skip("verl_legacy", self.reward_config.on_error)
        self.extra_keys = extra_keys(scorer.info, declared)
        _check_placement(scorer)
        self._scorer = started(scorer)
        self._wants_prompt = scorer.info.takes_prompt  # the prompt is decoded only when asked for
        # Each run_single call is its own caller: a failed sample never fails another's call.
        self._batcher: Microbatcher[_Response] = Microbatcher(self._scorer, self._samples)
        self._skip = self.reward_config.on_error == "skip"

    async def run_single(self, data: Any) -> dict[str, Any]:
        """Score one sample (verl's reward loop calls this for every sample at once)."""
        # For multi-sequence outputs, the last sequence (as verl's naive manager).
        result = await self._batcher.score(_response(data, len(data) - 1, self._wants_prompt))
        if self._skip and not result.trainable[0]:
            # verl's v1 rollout drops a session that raises: the sample is left out of training.
            raise SkippedSample(self.spec.display_name, str(result.errors[0]))
        return self._output(result, 0)

    def __call__(self, data: Any, return_dict: bool = False) -> Any:
        """verl's older reward-manager call: the whole batch, a token-level reward tensor."""
        check_skip("verl_legacy", self.reward_config.on_error)  # one call for the batch: no drop
        responses = [_response(data, i, self._wants_prompt) for i in range(len(data))]
        result = self._scorer.score(self._samples(responses))
        tensor = self.assemble_rm_scores(data, result.scores)
        if not return_dict:
            return tensor
        extra = {k: [stackable(k, result.extras(i, (k,))[k]) for i in range(len(result))]
                 for k in self.extra_keys}
        return {"reward_tensor": tensor, "reward_extra_info": {**extra, ERROR_KEY: result.errors}}

    def _samples(self, responses: list[_Response]) -> list[Sample]:
        # One batch decode for the whole batch (verl's naive manager decodes one by one).
        texts = decode_ids(self.tokenizer, [r.ids for r in responses], skip_special_tokens=True)
        to_decode = [i for i, r in enumerate(responses) if isinstance(r.prompt, tuple)]
        prompts: list[Any] = [r.prompt for r in responses]
        if to_decode:  # prompt token ids (no raw prompt in the batch): one more batch decode
            decoded = decode_ids(self.tokenizer, [list(responses[i].prompt) for i in to_decode],
                                 skip_special_tokens=True)
            for i, text in zip(to_decode, decoded):
                prompts[i] = text
        return [Sample(r.data_source, text, r.ground_truth, r.extra_info, prompt)
                for r, text, prompt in zip(responses, texts, prompts)]

    def _output(self, result: BatchResult, index: int) -> dict[str, Any]:
        # verl builds its extra-info arrays from the *first* sample's keys, across
        # every reward-loop actor: each sample carries exactly the same keys.
        extra = {k: stackable(k, v) for k, v in result.extras(index, self.extra_keys).items()}
        extra[ERROR_KEY] = result.errors[index]
        if self._skip:
            extra[TRAINABLE_KEY] = 1.0 if result.trainable[index] else 0.0
        return {"reward_score": result.scores[index], "reward_extra_info": extra}


def extra_keys(info: RewardInfo, declared: Sequence[str] | None) -> tuple[str, ...]:
    """The reward's extra-info keys every sample carries: those declared in
    ``reward.verl_rewards.extra_keys``, else a composite's component scores, else none
    (the keys a reward returns are known only once it has scored, which is too
    late for verl's first sample)."""
    if declared is not None:
        return tuple(k for k in declared if k != ERROR_KEY)
    return tuple(key for key, _ in info.components)  # a composite's component scores


def stackable(key: str, value: Any) -> Any:
    """``value`` as one element of verl's ``np.array([... one per sample])``: a scalar
    as it is, a 0-d array as its number, a sequence (list, tuple, array, tensor) as
    JSON text. Every sample then adds one element whatever it returned, a failed
    sample's None included, so a list-valued key cannot make the array ragged."""
    if value is None or isinstance(value, (str, bytes, bool, int, float, Mapping)):
        return value
    shape = getattr(value, "shape", None)
    if shape == () and callable(getattr(value, "item", None)):
        return value.item()
    if shape is None and not isinstance(value, (list, tuple)):
        return value  # an object verl stores as it is
    if key not in _warned_keys:
        _warned_keys.add(key)
        logger.warning("reward extra key %r holds a %s: verl receives it as JSON text (verl's "
                       "reward loop stacks one value per sample with np.array)", key, type(value).__name__)
    return dumps(value)  # the wire's JSON: NumPy and torch values as lists, NaN as null


_warned_keys: set[str] = set()


def section_config(config: Any) -> tuple[dict[str, Any], tuple[str, ...] | None]:
    """The ``reward.verl_rewards`` section of a verl config (validated by
    ``Scorer.from_config``), and the manager's own ``extra_keys`` option from it."""
    reward = config.get("reward") if hasattr(config, "get") else None
    section = reward.get(SECTION) if reward is not None else None
    if section is None:
        raise ConfigError(
            f"verl_rewards.integrations.verl.RewardManager needs the verl-rewards reward section "
            f"under reward.{SECTION}, e.g. +reward.{SECTION}.plugin=gsm8k "
            f"(see docs/integrations/verl.md)")
    options = dict(to_container(section))
    declared = options.pop("extra_keys", None)
    if declared is not None and (isinstance(declared, str) or not all(isinstance(k, str) for k in declared)):
        raise ConfigError(f"reward.{SECTION}.extra_keys must be a list of key names, not {declared!r}")
    return options, (None if declared is None else tuple(declared))


def _check_placement(scorer: Scorer) -> None:
    """Refuse, now, a reward pool the Ray cluster can never place (verl's own
    ``reward.num_workers`` is another pool: name ours)."""
    from ..executors.ray_session import joined_cluster_resources

    cluster = joined_cluster_resources() if scorer.config.executor == "ray" else None
    if cluster is None:
        return
    problem = scorer.unplaceable(cluster, prefix=f"reward.{SECTION}.")
    if problem is not None:
        raise ConfigError(f"the verl-rewards reward pool for {scorer.ref.display_name} cannot be "
                          f"placed on this Ray cluster: {problem}")


class _Response(NamedTuple):
    """One response of a verl batch, not yet decoded."""

    ids: list[int]
    data_source: Any
    ground_truth: Any
    extra_info: dict[str, Any]
    prompt: Any  # chat messages (verl's raw_prompt), prompt token ids to decode, or None


def _response(data: Any, i: int, wants_prompt: bool) -> _Response:
    """Row ``i`` of a verl ``DataProto``, read as verl's naive manager reads it."""
    response_ids = data.batch["responses"][i]
    valid = int(data.batch["attention_mask"][i, -response_ids.shape[-1]:].sum())
    extras = {k: v[i] for k, v in data.non_tensor_batch.items()}
    extra_info = dict(extras.get("extra_info", None) or {})
    tool_fields = extras.get("tool_extra_fields", None)
    if tool_fields is not None:
        extra_info.update(tool_fields.items())
    extra_info["num_turns"] = extras.get("__num_turns__", None)
    extra_info["rollout_reward_scores"] = extras.get("reward_scores", {})
    return _Response(response_ids[:valid].tolist(), extras["data_source"],
                     extras["reward_model"]["ground_truth"], extra_info,
                     _prompt(data, i, extras) if wants_prompt else None)


def _prompt(data: Any, i: int, extras: Mapping[str, Any]) -> Any:
    """The prompt: verl's raw chat messages when the batch has them, else its token ids."""
    raw = normalise_prompt(extras.get("raw_prompt", None))
    if raw is not None:
        return raw
    prompt_ids = data.batch["prompts"][i]
    mask = data.batch["attention_mask"][i, : prompt_ids.shape[-1]].bool()
    return tuple(prompt_ids[mask].tolist())  # a tuple: decoded with the batch
