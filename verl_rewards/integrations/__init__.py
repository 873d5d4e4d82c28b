"""Adapters that plug verl-rewards plugins into other trainers, without forking them.

* :mod:`verl_rewards.integrations.verl`: ``RewardManager`` for verl's reward loop
  (``reward.reward_manager.module.path=pkg://verl_rewards.integrations.verl``), and
  ``compute_score`` for ``reward.custom_reward_function``.
* :mod:`verl_rewards.integrations.trl`: ``reward_func(plugin, ...)`` builds an
  entry for TRL's ``GRPOTrainer(reward_funcs=[...])``.
* :mod:`verl_rewards.integrations.openrlhf_reward`: a ready ``reward_func`` file
  for OpenRLHF's ``--reward.remote_url``, choosing the plugin by environment variable.

Each adapter builds one ``Scorer`` per process (``Scorer.from_config``); no
trainer library is imported here.
"""
