from __future__ import annotations

import threading
import time

from verl_rewards import watchdog as watchdog_module
from verl_rewards.errors import SampleTimeout
from verl_rewards.watchdog import Progress, Watchdog


def _watchdog_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "verl-rewards-watchdog"]


def _spin_until_interrupted(limit_s: float) -> tuple[int | None, float]:
    progress = Progress()
    began = time.monotonic()
    with Watchdog(progress, limit_s) as watchdog:
        try:
            progress.begin(7)
            while True:
                pass
        except SampleTimeout:
            return watchdog.take_fired(), time.monotonic() - began


def test_one_watchdog_thread_serves_every_call():
    for _ in range(50):
        with Watchdog(Progress(), 5.0):
            pass
    assert len(_watchdog_threads()) == 1


def test_an_overrunning_call_is_interrupted_and_named():
    fired, elapsed = _spin_until_interrupted(0.2)
    assert fired == 7
    assert 0.2 <= elapsed < 2


def test_two_threads_are_timed_independently():
    results: dict[str, tuple[int | None, float]] = {}
    threads = [threading.Thread(target=lambda k=k, s=s: results.__setitem__(k, _spin_until_interrupted(s)))
               for k, s in (("short", 0.2), ("long", 0.8))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results["short"][0] == results["long"][0] == 7
    assert results["short"][1] < 0.8 <= results["long"][1]


def test_a_disarmed_watchdog_never_fires():
    progress = Progress()
    with Watchdog(progress, 0.05) as watchdog:
        progress.begin(1)
        watchdog.disarm()
        time.sleep(0.3)  # long past the limit: nothing may be raised
    assert watchdog.take_fired() is None


def test_a_call_that_catches_the_timeout_gets_it_again_until_the_grace_ends(monkeypatch):
    monkeypatch.setattr(watchdog_module, "HARD_GRACE_S", 0.6)
    progress = Progress()
    caught: list[float] = []
    began = time.monotonic()
    with Watchdog(progress, 0.1) as watchdog:
        progress.begin(3)
        while time.monotonic() - began < 1.6:  # a reward with a bare except, past the grace
            try:
                while time.monotonic() - began < 1.6:
                    pass
            except SampleTimeout:
                caught.append(time.monotonic() - began)
        watchdog.disarm()
        assert watchdog.overran()
    assert len(caught) >= 2  # raised again, not once
    assert caught[-1] < 0.1 + 0.6 + 0.3  # and no more once the grace is over
