"""Several weighted rewards in one config (compatibility module).

The reference layer lives in :mod:`verl_rewards.spec` (``CompositeRef``,
``spec_from_config``) and the scoring layer in :mod:`verl_rewards.dispatch`
(``resolve_spec``, ``score_spec``); this module re-exports both.
"""

from __future__ import annotations

from .dispatch import LoadedComposite, LoadedSpec, resolve_spec, score_spec
from .spec import Component, CompositeRef, RewardSpec, spec_from_config

__all__ = ["Component", "CompositeRef", "LoadedComposite", "LoadedSpec", "RewardSpec",
           "resolve_spec", "score_spec", "spec_from_config"]
