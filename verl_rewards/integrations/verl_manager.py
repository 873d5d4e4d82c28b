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
import threading
from collections.abc import Mapping
from typing import Any, NamedTuple

from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from verl_rewards.config import RewardConfig, load_config
from verl_rewards.errors import ConfigError
from verl_rewards.executors.shared_pool import SharedPool
from verl_rewards.integrations._batching import Microbatcher
from verl_rewards.integrations._common import build_scorer, plain
from verl_rewards.results import BatchResult
from verl_rewards.samples import Sample
from verl_rewards.spec import RewardSpec, spec_from_config

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
        self.reward_config = section_config(config)
        self.spec = spec_from_config(self.reward_config)
        self._backend = _backend(self.spec, self.reward_config)
        self._wants_prompt = _wants_prompt(self.spec)
        self._batcher: Microbatcher[_Response] = Microbatcher(self._score_responses)
        self._keys = _KnownKeys()

    async def run_single(self, data: Any) -> dict[str, Any]:
        """Score one sample (verl's reward loop calls this for every sample at once)."""
        # For multi-sequence outputs, the last sequence (as verl's naive manager).
        scored = await self._batcher.score(_response(data, len(data) - 1, self._wants_prompt))
        return self._output(scored.result, scored.position)

    def __call__(self, data: Any, return_dict: bool = False) -> Any:
        """verl's older reward-manager call: the whole batch, a token-level reward tensor."""
        responses = [_response(data, i, self._wants_prompt) for i in range(len(data))]
        result = _run_sync(self._score_responses(responses))
        tensor = self.assemble_rm_scores(data, result.scores)
        if not return_dict:
            return tensor
        extra = {k: list(v) for k, v in result.extra_info.items()}
        return {"reward_tensor": tensor, "reward_extra_info": {**extra, ERROR_KEY: result.errors}}

    async def _score_responses(self, responses: list[_Response]) -> BatchResult:
        # One batch decode for the whole batch (verl's naive manager decodes one by one).
        decode = self.tokenizer.batch_decode  # type: ignore[attr-defined]
        texts = decode([r.ids for r in responses], skip_special_tokens=True)
        to_decode = [i for i, r in enumerate(responses) if isinstance(r.prompt, tuple)]
        prompts: list[Any] = [r.prompt for r in responses]
        if to_decode:  # prompt token ids (no raw prompt in the batch): one more batch decode
            decoded = decode([responses[i].prompt for i in to_decode], skip_special_tokens=True)
            for i, text in zip(to_decode, decoded):
                prompts[i] = text
        samples = [Sample(r.data_source, text, r.ground_truth, r.extra_info, prompt)
                   for r, text, prompt in zip(responses, texts, prompts)]
        return await self._backend.score(samples)

    def _output(self, result: BatchResult, index: int) -> dict[str, Any]:
        # verl builds its extra-info arrays from the first sample's keys: every
        # sample carries every key this process has seen, None where it has none.
        keys = self._keys.add(result.extra_info)
        extra = {k: (result.extra_info[k][index] if k in result.extra_info else None) for k in keys}
        extra[ERROR_KEY] = result.errors[index]
        return {"reward_score": result.scores[index], "reward_extra_info": extra}


def section_config(config: Any) -> RewardConfig:
    """The validated ``reward.verl_rewards`` section of a verl config."""
    reward = config.get("reward") if hasattr(config, "get") else None
    section = reward.get(SECTION) if reward is not None else None
    if section is None:
        raise ConfigError(
            f"verl_rewards.integrations.verl.RewardManager needs the verl-rewards reward section "
            f"under reward.{SECTION}, e.g. +reward.{SECTION}.plugin=gsm8k "
            f"(see docs/integrations/verl.md)")
    return load_config(plain(section))


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
    """Whether any reward of ``spec`` takes the prompt (when it imports here; else assume so)."""
    from verl_rewards.dispatch import loaded_rewards, resolve_spec

    try:
        return any(r.prompt_param for r in loaded_rewards(resolve_spec(spec)))
    except Exception:  # noqa: BLE001 - not importable here: the workers will say why
        return True


class _KnownKeys:
    """The extra-info keys seen so far in this process, in first-seen order."""

    def __init__(self) -> None:
        self._keys: dict[str, None] = {}
        self._lock = threading.Lock()

    def add(self, extra_info: Mapping[str, Any]) -> list[str]:
        if any(k not in self._keys for k in extra_info):
            with self._lock:
                self._keys.update(dict.fromkeys(k for k in extra_info if k != ERROR_KEY))
        return list(self._keys)


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


