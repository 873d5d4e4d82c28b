"""Model-based rewards for verl-rewards: ``hf_reward_model`` and ``llm_judge``.

Importing this package imports neither torch nor the OpenAI client: each
plugin module imports what it needs.
"""

from __future__ import annotations

from importlib.metadata import version

__version__ = version("verl-rewards-models")
__all__ = ["__version__"]
