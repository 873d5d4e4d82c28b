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
``reward.verl_rewards.num_workers`` reward actors
(:mod:`verl_rewards.executors.shared_pool`).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from verl_rewards.config import RewardConfig, load_config
from verl_rewards.errors import ConfigError, SkippedSample
from verl_rewards.executors.shared_pool import SharedPool
from verl_rewards.integrations._batching import Microbatcher
from verl_rewards.integrations._common import build_scorer, plain
from verl_rewards.integrations._skip import (
    TRAINABLE_KEY,
    trainable_flags,
    verl_leaves_out_failed_sessions,
)
from verl_rewards.results import BatchResult
from verl_rewards.samples import Sample
from verl_rewards.spec import CompositeRef, RewardSpec, refs_of, spec_from_config
from verl_rewards.token_rewards import decode_ids

__all__ = ["RewardManager"]


SECTION = "verl_rewards"  # reward.verl_rewards: the verl-rewards reward section
ERROR_KEY = "error"


class RewardManager(RewardManagerBase):
    """A verl reward manager that scores through verl-rewards."""

    def __init__(
        self, config: Any, tokenizer: Any, compute_score: Any = None,
        reward_router_address: str | None = None, reward_model_tokenizer: Any = None,
        **_: Any,
    ) -> None:
        super().__init__(config, tokenizer, compute_score)
        self.reward_config, declared = section_config(config)
        self.spec = spec_from_config(self.reward_config)
        self.extra_keys = extra_keys(self.spec, declared)
        self._backend = _backend(self.spec, self.reward_config)
        self._wants_prompt = _wants_prompt(self.spec)
        self._batcher: Microbatcher[_Response] = Microbatcher(self._score_responses)
        self._skip = self.reward_config.on_error == "skip"
        self._skip_raises = self._skip and verl_leaves_out_failed_sessions(config)

    async def run_single(self, data: Any) -> dict[str, Any]:
        """Score one sample (verl's reward loop calls this for every sample at once)."""
        # For multi-sequence outputs, the last sequence (as verl's naive manager).
        scored = await self._batcher.score(_response(data, len(data) - 1, self._wants_prompt))
        if self._skip_raises and not scored.result.trainable[scored.position]:
            # verl's v1 rollout drops a session that raises: the sample is left out of training.
            raise SkippedSample(self.spec.display_name, str(scored.result.errors[scored.position]))
        return self._output(scored.result, scored.position)

    def __call__(self, data: Any, return_dict: bool = False) -> Any:
        """verl's older reward-manager call: the whole batch, a token-level reward tensor."""
        responses = [_response(data, i, self._wants_prompt) for i in range(len(data))]
        result = _run_sync(self._score_responses(responses))
        tensor = self.assemble_rm_scores(data, result.scores)
        if not return_dict:
            return tensor
        extra = {k: list(result.extra_info.get(k, [None] * len(result))) for k in self.extra_keys}
        if self._skip:
            extra[TRAINABLE_KEY] = trainable_flags(result)
        return {"reward_tensor": tensor, "reward_extra_info": {**extra, ERROR_KEY: result.errors}}

    async def _score_responses(self, responses: list[_Response]) -> BatchResult:
        # One batch decode for the whole batch (verl's naive manager decodes one by one).
        texts = decode_ids(self.tokenizer, [r.ids for r in responses], skip_special_tokens=True)
        to_decode = [i for i, r in enumerate(responses) if isinstance(r.prompt, tuple)]
        prompts: list[Any] = [r.prompt for r in responses]
        if to_decode:  # prompt token ids (no raw prompt in the batch): one more batch decode
            decoded = decode_ids(self.tokenizer, [list(responses[i].prompt) for i in to_decode],
                                 skip_special_tokens=True)
            for i, text in zip(to_decode, decoded):
                prompts[i] = text
        samples = [Sample(r.data_source, text, r.ground_truth, r.extra_info, prompt)
                   for r, text, prompt in zip(responses, texts, prompts)]
        return await self._backend.score(samples)

    def _output(self, result: BatchResult, index: int) -> dict[str, Any]:
        # verl builds its extra-info arrays from the *first* sample's keys, across
        # every reward-loop actor: each sample carries exactly the same keys.
        extra = {k: (result.extra_info[k][index] if k in result.extra_info else None)
                 for k in self.extra_keys}
        extra[ERROR_KEY] = result.errors[index]
        if self._skip:
            extra[TRAINABLE_KEY] = 1.0 if result.trainable[index] else 0.0
        return {"reward_score": result.scores[index], "reward_extra_info": extra}


def extra_keys(spec: RewardSpec, declared: Sequence[str] | None) -> tuple[str, ...]:
    """The reward's extra-info keys every sample carries: those declared in
    ``reward.verl_rewards.extra_keys``, else a composite's component scores, else none
    (the keys a reward returns are known only once it has scored, which is too
    late for verl's first sample)."""
    if declared is not None:
        return tuple(k for k in declared if k != ERROR_KEY)
    if isinstance(spec, CompositeRef):
        return tuple(c.key for c in spec.components)
    return ()


def section_config(config: Any) -> tuple[RewardConfig, tuple[str, ...] | None]:
    """The validated ``reward.verl_rewards`` section of a verl config, and the
    manager's own ``extra_keys`` option from it."""
    reward = config.get("reward") if hasattr(config, "get") else None
    section = reward.get(SECTION) if reward is not None else None
    if section is None:
        raise ConfigError(
            f"verl_rewards.integrations.verl.RewardManager needs the verl-rewards reward section "
            f"under reward.{SECTION}, e.g. +reward.{SECTION}.plugin=gsm8k "
            f"(see docs/integrations/verl.md)")
    options = dict(plain(section))
    declared = options.pop("extra_keys", None)
    if declared is not None and (isinstance(declared, str) or not all(isinstance(k, str) for k in declared)):
        raise ConfigError(f"reward.{SECTION}.extra_keys must be a list of key names, not {declared!r}")
    return load_config(options), (None if declared is None else tuple(declared))


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
    raw = extras.get("raw_prompt", None)
    if raw is not None:
        return [dict(m) for m in raw]
    prompt_ids = data.batch["prompts"][i]
    mask = data.batch["attention_mask"][i, : prompt_ids.shape[-1]].bool()
    return tuple(prompt_ids[mask].tolist())  # a tuple: decoded with the batch


def _wants_prompt(spec: RewardSpec) -> bool:
    """Whether any reward of ``spec`` takes the prompt, read from its signature
    without instantiating a class (a model loads in the pool, not in verl's
    actors); when it cannot be imported here, assume so (the workers will tell)."""
    from verl_rewards.resolve import PROMPT_PARAM, import_target

    wanted = set(PROMPT_PARAM.values())
    try:
        targets = [import_target(ref) for ref in refs_of(spec)]
    except Exception:  # noqa: BLE001 - not importable here: the workers will say why
        return True
    for target in targets:
        call = getattr(target, "__call__", None) if inspect.isclass(target) else target  # noqa: B004
        try:
            if wanted & set(inspect.signature(call).parameters):  # type: ignore[arg-type]
                return True
        except (TypeError, ValueError):
            return True
    return False


class _LocalBackend:
    """``executor: local``: score in this reward-loop actor, in a thread."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        self._scorer = build_scorer(spec, config)

    async def score(self, samples: list[Sample]) -> BatchResult:
        return await asyncio.to_thread(self._scorer.score, samples)


def _backend(spec: RewardSpec, config: RewardConfig) -> _LocalBackend | SharedPool:
    return _LocalBackend(spec, config) if config.executor == "local" else SharedPool(spec, config)


def _run_sync(coroutine: Any) -> BatchResult:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)  # type: ignore[no-any-return]
    raise RuntimeError("RewardManager.__call__ is synchronous: call run_single from a running loop")


