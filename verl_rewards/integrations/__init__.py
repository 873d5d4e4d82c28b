"""Adapters that plug verl-rewards plugins into other trainers, without forking them.

* :mod:`verl_rewards.integrations.verl`: ``RewardManager`` for verl's reward loop
  (``reward.reward_manager.module.path=pkg://verl_rewards.integrations.verl``), and
  ``compute_score`` for ``reward.custom_reward_function``.
* :mod:`verl_rewards.integrations.trl`: ``reward_func(plugin, ...)`` builds an
  entry for TRL's ``GRPOTrainer(reward_funcs=[...])``.
* :mod:`verl_rewards.integrations.openrlhf_reward`: a ready ``reward_func`` file
  for OpenRLHF's ``--reward.remote_url``, choosing the plugin by environment variable.
* :mod:`verl_rewards.integrations.verifiers`: ``reward_func(reward, ...)`` for a
  verifiers 0.4 task reward, and ``score`` to plug by import string.
* :mod:`verl_rewards.integrations.skyrl`: ``register()`` a skyrl-gym environment
  whose ``env_config`` is the reward section.
* :mod:`verl_rewards.integrations.areal`: ``reward_fn(reward, ...)``, picklable for
  AReaL's ``AsyncRewardWrapper`` process pool.
* :mod:`verl_rewards.integrations.slime`: ``reward`` for slime's ``--custom-rm-path``.

Each adapter builds one ``Scorer`` per process (``Scorer.from_config``); no
trainer library is imported here.
"""
