"""One runner per host: score samples through a host's adapter the way that host calls it.

A runner takes a reward section and samples and returns what the host saw for
each: the score, and the error where the host shows one (None where it shows
none). Each imports its host (and adapter) when run, never at import.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import SimpleNamespace
from typing import Any, NamedTuple

from ..samples import Sample

AREAL_TIMEOUT_S = 120.0  # AsyncRewardWrapper's own limit here: far above any reward's timeout_s


class Seen(NamedTuple):
    """What a host got for one sample."""

    score: float
    error: str | None  # the error as the host shows it; None when it scored or the host shows none


Runner = Callable[[Mapping[str, Any], Sequence[Sample]], list[Seen]]


class Host(NamedTuple):
    """A host that runs plugins through one adapter."""

    name: str
    module: str | None  # the host's import name (None: a calling convention, nothing to install)
    run: Runner
    shows_errors: bool  # whether a failed sample's error is visible in what the host gets
    routes_per_sample: bool  # whether each sample carries its own data source
    carries_extra_info: bool = True  # whether a sample's extra_info reaches the reward

    def load(self) -> None:
        """Import the host's package now."""
        if self.module is not None:
            importlib.import_module(self.module)

    def installed(self) -> bool:
        """Whether the host's package is importable here."""
        if self.module is None:
            return True
        try:
            return importlib.util.find_spec(self.module) is not None
        except ModuleNotFoundError:  # a dotted name whose parent package is missing
            return False


def _verl_function(section: Mapping[str, Any], samples: Sequence[Sample]) -> list[Seen]:
    from verl_rewards.integrations.verl import compute_score

    kwargs = _verl_reward_kwargs(section)
    seen = []
    for s in samples:  # verl's naive reward manager: one call per sample
        result = compute_score(s.data_source, s.solution_str, s.ground_truth, s.extra_info, **kwargs)
        seen.append(Seen(float(result["score"] if isinstance(result, dict) else result), None))
    return seen


def _verl_reward_kwargs(section: Mapping[str, Any]) -> dict[str, Any]:
    """verl's ``custom_reward_function.reward_kwargs`` for a section."""
    selectors = ("plugin", "path", "name", "kwargs", "rewards", "route")
    options = {k: v for k, v in section.items() if k not in selectors}
    chosen = {k: v for k, v in section.items() if k in ("plugin", "path", "name", "rewards", "route")}
    return {**chosen, **dict(section.get("kwargs") or {}), "verl_rewards": options}


def _verl_manager(section: Mapping[str, Any], samples: Sequence[Sample]) -> list[Seen]:
    from omegaconf import OmegaConf

    from verl_rewards.integrations.verl import RewardManager

    tokenizer = _byte_tokenizer()
    config = OmegaConf.create({"reward": {"verl_rewards": {"executor": "local", **section}}})
    manager = RewardManager(config, tokenizer)
    batch = _verl_batch(tokenizer, samples)

    async def run_all() -> list[dict[str, Any]]:  # verl's reward loop: every sample at once
        return list(await asyncio.gather(*(manager.run_single(batch[i:i + 1]) for i in range(len(batch)))))

    return [Seen(float(out["reward_score"]), out["reward_extra_info"]["error"]) for out in asyncio.run(run_all())]


def _byte_tokenizer() -> Any:
    """A byte-level tokenizer built in code: any text encodes and decodes back exactly."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    core = Tokenizer(models.BPE(vocab={"<pad>": 0, "<eos>": 1, **{c: i + 2 for i, c in enumerate(alphabet)}},
                                merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", clean_up_tokenization_spaces=False)


def _verl_batch(tokenizer: Any, samples: Sequence[Sample]) -> Any:
    """A verl ``DataProto``: a one-token prompt, right-padded responses, the rows' fields."""
    import numpy as np
    import torch
    from tensordict import TensorDict
    from verl.protocol import DataProto

    ids = [tokenizer.encode(s.solution_str, add_special_tokens=False) for s in samples]
    width = max(1, *(len(i) for i in ids))
    responses = torch.full((len(ids), width), tokenizer.pad_token_id, dtype=torch.long)
    mask = torch.zeros(len(ids), 1 + width, dtype=torch.long)
    for row, one in enumerate(ids):
        responses[row, : len(one)] = torch.tensor(one, dtype=torch.long)
        mask[row, : 1 + len(one)] = 1
    prompts = torch.full((len(ids), 1), tokenizer.eos_token_id, dtype=torch.long)
    tensors = TensorDict({"prompts": prompts, "responses": responses, "attention_mask": mask,
                          "input_ids": torch.cat([prompts, responses], dim=1)}, batch_size=len(ids))
    non_tensor = {
        "data_source": np.array([s.data_source for s in samples], dtype=object),
        "reward_model": np.array([{"ground_truth": s.ground_truth} for s in samples], dtype=object),
        "extra_info": np.array([dict(s.extra_info or {}) for s in samples], dtype=object),
    }
    return DataProto(batch=tensors, non_tensor_batch=non_tensor)


def _trl(section: Mapping[str, Any], samples: Sequence[Sample]) -> list[Seen]:
    from verl_rewards.integrations.trl import reward_func

    fn = reward_func(reward=section)
    seen: dict[int, Seen] = {}
    for indices in _groups(samples, lambda s: tuple(sorted(s.extra_info or {}))):
        batch = [samples[i] for i in indices]
        columns: dict[str, list[Any]] = {
            "ground_truth": [s.ground_truth for s in batch],
            "data_source": [s.data_source for s in batch],
        }
        for key in sorted(batch[0].extra_info or {}):  # TRL passes dataset columns
            columns[key] = [(s.extra_info or {})[key] for s in batch]
        result = fn(prompts=[_text(s.prompt) for s in batch], completions=[s.solution_str for s in batch],
                    completion_ids=[[] for _ in batch], **columns)
        scores = asyncio.run(result) if asyncio.iscoroutine(result) else result
        # None: a sample TRL leaves out (on_error: skip); NaN never equals a score.
        seen.update({i: Seen(float("nan") if x is None else float(x), None) for i, x in zip(indices, scores)})
    return [seen[i] for i in range(len(samples))]


def _openrlhf(section: Mapping[str, Any], samples: Sequence[Sample]) -> list[Seen]:
    from verl_rewards.integrations.openrlhf_reward import score_queries

    seen: dict[int, Seen] = {}
    for indices in _groups(samples, lambda s: s.data_source):  # OpenRLHF: one data source per run
        batch = [samples[i] for i in indices]
        env = {"VERL_REWARDS_CONFIG": json.dumps(dict(section)),
               "VERL_REWARDS_DATA_SOURCE": batch[0].data_source}
        prompts = [_text(s.prompt) for s in batch]
        with _environment(env):
            out = score_queries([p + s.solution_str for p, s in zip(prompts, batch)], prompts,
                                [s.ground_truth for s in batch])
        failed = out["extra_logs"]["reward_failed"].tolist()
        seen.update({i: Seen(float(r), "failed" if f else None)
                     for i, r, f in zip(indices, out["rewards"].tolist(), failed)})
    return [seen[i] for i in range(len(samples))]


def _verifiers(section: Mapping[str, Any], samples: Sequence[Sample]) -> list[Seen]:
    import verifiers.v1 as vf

    from verl_rewards.integrations.verifiers import INFO_KEY, reward_func

    fn = reward_func(section)
    task_cls = type("ConformanceTask", (vf.Task,), {"verl_rewards": vf.reward(fn)})

    async def one(s: Sample) -> Seen:
        data = vf.WireTaskData(prompt=_text(s.prompt) or None, answer=s.ground_truth,
                               data_source=s.data_source, info=dict(s.extra_info or {}))
        task = task_cls(data)
        trace = vf.Trace(task=vf.TraceTask(type="ConformanceTask", data=data, key=task.key, hash=task.hash),
                         agent=vf.AgentInfo(config=vf.AgentConfig(), name="conformance", trainable=False),
                         root_reply=s.solution_str)
        await task.score(trace)
        failure = trace.info.get(INFO_KEY, {}).get(fn.__name__, {})
        return Seen(trace.reward, failure.get("error"))

    async def run_all() -> list[Seen]:  # concurrently, as verifiers runs rollouts
        return list(await asyncio.gather(*(one(s) for s in samples)))

    return asyncio.run(run_all())


def _skyrl(section: Mapping[str, Any], samples: Sequence[Sample]) -> list[Seen]:
    import skyrl_gym

    from verl_rewards.integrations.skyrl import register

    env_id = register()
    seen = []
    for s in samples:  # one environment per trajectory
        extras = {"reward_spec": {"ground_truth": s.ground_truth}, "data_source": s.data_source,
                  "extra_info": s.extra_info, "prompt": s.prompt}
        env = skyrl_gym.make(env_id, env_config=dict(section), extras=extras)
        out = env.step(s.solution_str)
        env.close()
        seen.append(Seen(float(out["reward"]), out["metadata"]["error"]))
    return seen


def _areal(section: Mapping[str, Any], samples: Sequence[Sample]) -> list[Seen]:
    from areal.api.reward_api import AsyncRewardWrapper

    from verl_rewards.integrations.areal import reward_fn

    wrapper = AsyncRewardWrapper(reward_fn(section), timeout_seconds=AREAL_TIMEOUT_S, max_workers=1)

    async def run_all() -> list[float]:
        # One at a time: AReaL's clock starts when a call is queued for the pool.
        return [float(await wrapper(_text(s.prompt), s.solution_str, [], [], answer=s.ground_truth,
                                    data_source=s.data_source, extra_info=s.extra_info))
                for s in samples]

    try:
        return [Seen(score, None) for score in asyncio.run(run_all())]
    finally:
        _shutdown_areal_pool(AsyncRewardWrapper, wrapper.max_workers)


def _shutdown_areal_pool(wrapper_cls: Any, key: int) -> None:
    with wrapper_cls._lock:
        executor = wrapper_cls._executors.pop(key, None)
    if executor is not None:
        executor.shutdown(wait=True, cancel_futures=True)


def _slime(section: Mapping[str, Any], samples: Sequence[Sample]) -> list[Seen]:
    from verl_rewards.integrations.slime import METADATA_KEY, reward

    batch = [SimpleNamespace(prompt=s.prompt or "", response=s.solution_str, label=s.ground_truth,
                             metadata={"data_source": s.data_source, **(s.extra_info or {})})
             for s in samples]
    with _environment({"VERL_REWARDS_CONFIG": json.dumps(dict(section))}):
        scores = asyncio.run(reward(SimpleNamespace(custom_rm_path=None), batch))  # --group-rm
    assert isinstance(scores, list)  # a list in, a list out
    return [Seen(float(x), b.metadata[METADATA_KEY]["error"]) for x, b in zip(scores, batch)]


@contextlib.contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    """These ``VERL_REWARDS_*`` variables and no others meanwhile: the caller's own
    (a plugin chosen for another run, say) must not mix with the section under test."""
    saved = {k: v for k, v in os.environ.items() if k.startswith("VERL_REWARDS_")}
    try:
        for k in saved:
            del os.environ[k]
        os.environ.update(values)
        yield
    finally:
        for k in values:
            os.environ.pop(k, None)
        os.environ.update(saved)


def _groups(samples: Sequence[Sample], key: Callable[[Sample], Any]) -> list[list[int]]:
    groups: dict[Any, list[int]] = {}
    for i, s in enumerate(samples):
        groups.setdefault(key(s), []).append(i)
    return list(groups.values())


def _text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence):
        return "\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, Mapping))
    return ""


HOSTS: tuple[Host, ...] = (
    Host("verl_function", "verl", _verl_function, shows_errors=False, routes_per_sample=True),
    Host("verl_manager", "verl.experimental.reward_loop.reward_manager.base", _verl_manager,
         shows_errors=True, routes_per_sample=True),
    Host("trl", "trl", _trl, shows_errors=False, routes_per_sample=True),
    Host("openrlhf", "openrlhf", _openrlhf, shows_errors=True, routes_per_sample=False,
         carries_extra_info=False),
    Host("verifiers", "verifiers.v1", _verifiers, shows_errors=True, routes_per_sample=True),
    Host("skyrl", "skyrl_gym", _skyrl, shows_errors=True, routes_per_sample=True),
    Host("areal", "areal.api.reward_api", _areal, shows_errors=False, routes_per_sample=True),
    Host("slime", None, _slime, shows_errors=True, routes_per_sample=True),
)
