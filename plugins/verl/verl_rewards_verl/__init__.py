"""verl-rewards-verl: ``verl_default``, verl 0.9.1's ``default_compute_score`` without verl."""
