"""What the adapters share (``integrations/_common.py``): their default executor, and
scorers that close at exit without being kept alive for it."""

from __future__ import annotations

import gc
import time
from pathlib import Path

from verl_rewards.integrations._common import ADAPTER_DEFAULTS, ProcessCache, scorer_from_section
from verl_rewards.samples import Sample
from verl_rewards.scorer import Scorer


def test_the_adapters_score_on_worker_processes_by_default_and_a_section_may_say_local():
    assert ADAPTER_DEFAULTS == {"executor": "process"}
    built = scorer_from_section({"plugin": "exact_match"})
    local = scorer_from_section({"plugin": "exact_match", "executor": "local"})
    try:
        assert (built.config.executor, local.config.executor) == ("process", "local")
    finally:
        built.close()
        local.close()


def test_a_scorer_its_cache_forgets_is_collected_with_its_workers():
    cache: ProcessCache[Scorer] = ProcessCache()
    scorer = cache.get("key", lambda: scorer_from_section({"plugin": "exact_match", "num_workers": 2}))
    pids = set(scorer.score([Sample("d", str(i), "1") for i in range(8)]).extra_info["pid"])
    assert len(pids) == 2
    del scorer
    cache.clear()  # what the adapters' caches do in tests, or after a plugin is reinstalled
    gc.collect()
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)


# Its objects print alike whatever they hold (a class made here does not pickle: keyed by identity).
_PrintsAlike = type("PrintsAlike", (), {"__init__": lambda self, value: setattr(self, "value", value),
                                        "__repr__": lambda self: "<threshold>"})


def test_the_selection_key_of_unhashable_options_tells_apart_values_that_print_alike():
    from verl_rewards.integrations._common import selection_key

    def options(value: object) -> dict[str, object]:
        return {"plugin": "exact_match", "nested": {"t": value}}  # a dict: unhashable

    one = _PrintsAlike(1)
    assert selection_key(options(one)) != selection_key(options(_PrintsAlike(2)))
    assert selection_key(options(one)) == selection_key(options(one))
