"""verl-rewards-text: short-answer QA rewards (``qa_em``, ``qa_f1``) with SQuAD normalisation."""
