"""Model-based rewards for verl-rewards: ``hf_reward_model`` and ``llm_judge``.

Importing this package imports neither torch nor the OpenAI client: each
plugin module imports what it needs.
"""

from __future__ import annotations

from importlib.metadata import version

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # Read when asked, not at import: a package sent with reward.ship_package has no
    # installed metadata on the worker. The version is written once, in pyproject.toml.
    if name == "__version__":
        return version("verl-rewards-models")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
