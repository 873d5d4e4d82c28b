"""Reference GRPO trainer for verl-rewards: a tiny causal LM, rewards on Ray workers.

Run it with ``python -m trainer.main [dotlist overrides]``; see ``docs/trainer.md``.
"""
