"""verl-rewards-code: the ``code_exec`` reward, scoring programs by running tests in a sandbox."""
