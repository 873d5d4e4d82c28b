"""Adapters that plug verl-rewards plugins into other trainers, without forking them.

* :mod:`verl_rewards.integrations.verl`: ``compute_score`` for verl's
  ``reward.custom_reward_function`` (``path=pkg://verl_rewards.integrations.verl``).
* :mod:`verl_rewards.integrations.trl`: ``reward_func(plugin, ...)`` builds an
  entry for TRL's ``GRPOTrainer(reward_funcs=[...])``.
* :mod:`verl_rewards.integrations.openrlhf_reward`: a ready ``reward_func`` file
  for OpenRLHF's ``--remote_rm_url``, choosing the plugin by environment variable.

Each adapter resolves its plugin once per process, by its real module name; no
trainer library is imported here.
"""
