"""Reward files used by the benchmarks (file rewards: they travel to Ray workers)."""

import asyncio
import re
import time


def trivial(data_source, solution_str, ground_truth, extra_info=None):
    """Near-zero work: isolates executor overhead."""
    return 1.0 if solution_str == ground_truth else 0.0


def cpu_3ms(data_source, solution_str, ground_truth, extra_info=None, ms=3.0):
    """Burn ``ms`` of CPU in pure Python (a regex-heavy math checker, say)."""
    end = time.perf_counter() + ms / 1000
    x = 0
    while time.perf_counter() < end:
        x += 1
    return 1.0 if solution_str == ground_truth else 0.0


async def io_50ms(data_source, solution_str, ground_truth, extra_info=None, ms=50.0):
    """Wait ``ms`` without CPU (an LLM judge or sandbox call)."""
    await asyncio.sleep(ms / 1000)
    return 1.0 if solution_str == ground_truth else 0.0


_NUMBER = re.compile(r"-?[0-9.,]+")


def gsm8k_like(data_source, solution_str, ground_truth, extra_info=None):
    """verl's gsm8k flexible check in miniature: the last number vs the answer."""
    numbers = _NUMBER.findall(solution_str[-300:])
    return 1.0 if numbers and numbers[-1].rstrip(".").replace(",", "") == str(ground_truth) else 0.0


def stalled_batch(data_sources, solution_strs, ground_truths, extra_infos, ms=10000.0):
    """A batch reward that takes ``ms`` per call, whatever its size: a pool that is busy
    while requests pile up behind it."""
    time.sleep(ms / 1000)
    return [1.0 if s == g else 0.0 for s, g in zip(solution_strs, ground_truths)]
