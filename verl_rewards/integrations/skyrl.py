"""skyrl-gym 0.4 adapter: a reward section as a single-turn SkyRL environment.

.. code-block:: python

    import skyrl_gym
    from verl_rewards.integrations.skyrl import register

    register()  # env id "verl_rewards" (idempotent)
    env = skyrl_gym.make("verl_rewards", env_config={"plugin": "gsm8k", "timeout_s": 10},
                         extras={"reward_spec": {"ground_truth": "72"}, "data_source": "gsm8k"})
    out = env.step(response_text)  # out["reward"], out["done"] (True), out["metadata"]

In SkyRL's trainer, set ``environment.env_class=verl_rewards`` and
``environment.skyrl_gym.verl_rewards`` to the reward section; each dataset
row's ``reward_spec.ground_truth`` is the ground truth, its ``data_source``
the data source and its ``extra_info`` the extra info.

skyrl-gym does not catch an exception from ``step``: one raising reward ends
the trajectory. Here a failed sample (raised, timed out, bad value) scores
``error_score`` with ``metadata["error"]`` saying why; ``step`` raises only
with ``on_error: raise``. ``on_error: skip`` is refused when the environment
is made: skyrl-gym has no way to leave a trajectory out (``docs/skip.md``). The reward's extra keys are in ``metadata`` too.
``get_metrics()`` gives SkyRL the episode's numeric extra keys and ``failed``
(0 or 1), which it averages over episodes. ``env_config`` may also be a plugin name. skyrl-gym is imported only by
:func:`register` and :class:`RewardEnv`. See ``docs/integrations/skyrl.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from verl_rewards.errors import ConfigError
from verl_rewards.integrations._common import score_batch, to_container
from verl_rewards.integrations._section import (
    Reward,
    numeric,
    sample_result,
    scorer_for,
    section_of,
)
from verl_rewards.samples import Sample, normalise_prompt

if TYPE_CHECKING:
    from skyrl_gym.envs.base_text_env import BaseTextEnvStepOutput

    RewardEnv: type  # made on first use (module __getattr__): it subclasses skyrl-gym's BaseTextEnv

__all__ = ["ENV_ID", "RewardEnv", "register"]

ENV_ID = "verl_rewards"
ENTRY_POINT = f"{__name__}:RewardEnv"  # by import path: SkyRL's workers resolve it themselves
ERROR_KEY = "error"
DEFAULT_DATA_SOURCE = "skyrl"


def register(env_id: str = ENV_ID) -> str:
    """Register the reward environment with skyrl-gym under ``env_id`` (idempotent); returns it."""
    import skyrl_gym

    if env_id not in skyrl_gym.registry:
        skyrl_gym.register(id=env_id, entry_point=ENTRY_POINT)
    return env_id


def section_of_env_config(env_config: Any) -> dict[str, Any]:
    """The reward section an ``env_config`` gives: a mapping (omegaconf too) or a plugin name."""
    reward: Reward = env_config if isinstance(env_config, str) else to_container(env_config)
    if not reward:  # SkyRL's trainer passes {} when environment.skyrl_gym.<env> is unset
        raise ConfigError(f"the {ENV_ID} SkyRL environment needs env_config: a reward section "
                          f"(in SkyRL's trainer, environment.skyrl_gym.{ENV_ID}.plugin=gsm8k) "
                          f"or a plugin name; it got {env_config!r}")
    return section_of(reward, {})


def sample_from_extras(extras: Mapping[str, Any], response: str = "") -> Sample:
    """The plugin's sample for a SkyRL dataset row (``extras``) and the model's response;
    a :class:`ConfigError` naming the row's keys when it has no ground truth."""
    spec = extras.get("reward_spec")
    if not isinstance(spec, Mapping) or "ground_truth" not in spec:
        raise ConfigError(f"the verl_rewards SkyRL environment reads the ground truth from "
                          f"extras['reward_spec']['ground_truth']; the row has "
                          f"reward_spec={spec!r:.120} (keys: {sorted(extras)})")
    info = extras.get("extra_info")
    source = extras.get("data_source")
    return Sample(DEFAULT_DATA_SOURCE if source is None else str(source), response,
                  spec["ground_truth"], dict(info) if isinstance(info, Mapping) else None,
                  normalise_prompt(extras.get("prompt")))


def _env_class() -> type:
    from skyrl_gym.envs.base_text_env import BaseTextEnv

    class RewardEnv(BaseTextEnv):  # type: ignore[misc]
        """One step: score the response with the reward section, then done."""

        def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None) -> None:
            super().__init__()
            self.section = section_of_env_config(env_config)
            self.row = sample_from_extras(extras or {})  # a row without ground truth fails here
            self.scorer = scorer_for(self.section, "skyrl")  # and a wrong name, or on_error: skip
            self.metrics: dict[str, float] = {}

        def step(self, action: str) -> BaseTextEnvStepOutput:
            self.turns += 1
            sample = self.row._replace(solution_str=action)
            result = sample_result(score_batch(self.scorer, [sample]), 0)
            metadata = {**result.extra, ERROR_KEY: result.error, "status": result.status}
            self.metrics = {**numeric(result.extra), "failed": float(result.status != "ok")}
            return {"observations": [], "reward": result.score, "done": True,
                    "metadata": metadata}

        def get_metrics(self) -> dict[str, Any]:
            """The episode's metrics (SkyRL averages them over episodes): the reward's
            numeric extra keys and ``failed`` (0 or 1)."""
            return dict(self.metrics)

    RewardEnv.__module__ = __name__
    RewardEnv.__qualname__ = "RewardEnv"
    return RewardEnv


def __getattr__(name: str) -> Any:
    # The environment subclasses skyrl-gym's BaseTextEnv: import it only when asked for,
    # and keep the class here so that it pickles by reference to this module.
    if name == "RewardEnv":
        cls = globals()["RewardEnv"] = _env_class()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
