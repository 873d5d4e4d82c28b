"""verl-rewards-reasoning-gym: any reasoning-gym task, scored by the task's own ``score_answer``."""
