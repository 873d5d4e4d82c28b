"""verl-rewards-format: response-shape rewards (tag format, length penalties)."""
