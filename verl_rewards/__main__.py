"""``python -m verl_rewards``: the ``verl-rewards`` command line."""

from .cli.main import console_main

if __name__ == "__main__":
    console_main()
