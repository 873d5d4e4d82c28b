"""How much memory ``verl-rewards serve`` holds for requests queued behind a busy pool.

    python benchmarks/bench_serve_memory.py                # both sides, ~1-2 minutes
    python benchmarks/bench_serve_memory.py --requests 6   # quicker

A batch reward that stalls (``stalled_batch`` in rewards.py) keeps the pool busy;
then REQUESTS requests of about 10.7 MB each (4096 samples of 2.6 KB, the case of
issue 26: as long responses, and as many small values) are sent at once. Once every request is queued or refused,
the server's resident memory over its idle baseline (``VmRSS``, and the peak
``VmHWM``) is read from /proc and divided by the request bytes it holds:

* ``unbounded``: ``--max-queue-mb 1000000``, the service's behaviour before the
  byte bound (every request admitted);
* ``bounded``: the default ``--max-queue-mb`` (requests past it answered 429).

Against a version without ``--max-queue-mb`` (run it with that checkout on
``PYTHONPATH``) it measures the one side that version has. The server is killed
after the reading (its queue would take minutes to drain).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench_serve import CLI, REWARDS, launch, wait_ready

SAMPLES = 4096
RESPONSE_CHARS = 2560


def body(shape: str) -> bytes:
    """About 10.7 MB: 4096 samples of 2.6 KB each, as one long text or as many small values
    (600 numbers in extra_info), which cost Python far more per byte."""
    if shape == "text":
        row = {"data_source": "bench", "solution_str": "x" * RESPONSE_CHARS, "ground_truth": "1"}
    else:
        row = {"data_source": "bench", "solution_str": "1", "ground_truth": "1",
               "extra_info": {"token_ids": list(range(100, 700))}}
    return json.dumps({"samples": [row] * SAMPLES}).encode()


def memory_kb(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


def queue_depth(url: str) -> float:
    with urllib.request.urlopen(url + "/metrics", timeout=300) as response:  # the loop may be parsing
        text = response.read().decode()
    return sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith("verl_rewards_queue_depth "))


async def flood(url: str, payload: bytes, n: int, pid: int, timeout_s: float) -> dict[str, Any]:
    """Send one request that occupies the pool, then ``n - 1`` at once; read memory once
    each is queued or refused."""
    import aiohttp

    refused = 0

    async def post(session: aiohttp.ClientSession) -> None:
        nonlocal refused
        try:
            async with session.post(url + "/v1/score", data=payload,
                                    headers={"Content-Type": "application/json"}) as response:
                if response.status == 429:
                    refused += 1
                await response.read()
        except (aiohttp.ClientError, asyncio.CancelledError):
            pass  # the server is killed after the reading

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
        tasks = [asyncio.ensure_future(post(session))]
        deadline = time.monotonic() + timeout_s
        while await asyncio.to_thread(queue_depth, url) < SAMPLES:
            assert time.monotonic() < deadline, "the first request never reached the pool"
            await asyncio.sleep(0.1)
        tasks += [asyncio.ensure_future(post(session)) for _ in range(n - 1)]
        while True:
            queued = round(await asyncio.to_thread(queue_depth, url) / SAMPLES)
            if queued + refused >= n:
                break
            assert time.monotonic() < deadline, f"{queued} queued, {refused} refused of {n}"
            await asyncio.sleep(0.2)
        await asyncio.sleep(1.0)  # the last parse settles
        reading = memory_kb(pid)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return {"queued": queued, "refused": refused, **reading}


def side(name: str, extra: list[str], n: int, payload: bytes) -> dict[str, Any]:
    env = {**os.environ}
    env.pop("VERL_REWARDS_TOKEN", None)
    argv = [CLI, "serve", "--port", "0", f"reward.path={REWARDS}", "reward.name=stalled_batch",
            "reward.kwargs.ms=60000", "reward.timeout_s=300", "reward.executor=local",
            "--max-queue", str(SAMPLES * (n + 1)), "--max-body-mb", "16", *extra]
    proc, url = launch(argv, env)
    try:
        wait_ready(url)
        time.sleep(1.0)  # idle: the baseline is the ready server's
        baseline = memory_kb(proc.pid)
        got = asyncio.run(flood(url, payload, n, proc.pid, timeout_s=300))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    held = got["queued"] * len(payload)
    growth = (got["VmRSS"] - baseline["VmRSS"]) * 1024
    peak = (got["VmHWM"] - baseline["VmRSS"]) * 1024
    return {"side": name, "held_bytes": held, "growth": growth, "peak": peak, **got}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=12)
    args = parser.parse_args(argv)
    helps = subprocess.run([CLI, "serve", "--help"], capture_output=True, text=True).stdout
    if "--max-queue-mb" in helps:
        sides = [("unbounded", ["--dev", "--max-queue-mb", "1000000"]), ("bounded (default)", ["--dev"])]
    else:
        sides = [("as installed (no byte bound)", [])]
    print(f"{args.requests} requests of {SAMPLES} samples at once behind a busy pool; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"  {'shape':<18} {'side':<28} {'MB each':>7} {'queued':>6} {'429':>4} {'held MB':>8} "
          f"{'RSS +MB':>8} {'peak +MB':>9} {'RSS per held byte':>18}")
    for shape in ("text", "small values"):
        payload = body(shape)
        for name, extra in sides:
            r = side(name, extra, args.requests, payload)
            per = r["growth"] / r["held_bytes"] if r["held_bytes"] else float("nan")
            print(f"  {shape:<18} {r['side']:<28} {len(payload) / 1e6:>7.1f} {r['queued']:>6} "
                  f"{r['refused']:>4} {r['held_bytes'] / 1e6:>8.1f} {r['growth'] / 1e6:>8.1f} "
                  f"{r['peak'] / 1e6:>9.1f} {per:>18.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
