"""verl-rewards-math: ``gsm8k`` and ``math_boxed``, answer-checking rewards for math problems."""
