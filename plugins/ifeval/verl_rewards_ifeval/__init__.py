"""verl-rewards-ifeval: IFEval's verifiable instructions as a reward (entry point ``ifeval``)."""
