"""``verl-rewards serve`` against its peers, side by side in one run.

    python benchmarks/bench_serve.py                 # every part, ~2 minutes
    python benchmarks/bench_serve.py --part 3        # the Open Reward Standard routes
    python benchmarks/bench_serve.py --rounds 1      # quicker

1. Single-sample requests (OpenRLHF's and slime's traffic) from 64 keep-alive
   clients: the service (trivial reward, local executor) vs a bare aiohttp
   server that only parses the JSON body. Aim: >= 0.6x its requests/s.
2. 256-sample requests on 2 Ray workers with a 2 ms CPU reward: the service
   vs an in-process ``Scorer`` on the same pool configuration, both on this
   process's Ray session. Aim: >= 0.85x its samples/s.
3. The Open Reward Standard routes (``serve --tasks``) next to the native ``/v1/score``
   on the same service and plugin (gsm8k, local executor), 64 keep-alive clients:
   single answers (an episode: ``/create``, ``/call`` submit, ``/delete``; episodes/s)
   vs one-sample ``/v1/score`` requests, aim >= 0.5x; and 256-candidate ``score_group``
   calls vs 256-sample ``/v1/score`` requests (2 clients), aim: the same samples/s.
   With each side the server's CPU time per item (from /proc), and where it goes: a
   minimal POST, a session without its call, and the request-side stages of a
   256-sample call on each route, timed in this process.

Prints requests/s or samples/s with p50/p99 latency for each side, and the ratio;
the sides alternate over a few rounds, so a busy machine's noise falls on both.
Every server is a subprocess (the console script for the service); the load
generator is this process's one asyncio loop, the same for both sides.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import queue
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

REWARDS = Path(__file__).resolve().parent / "rewards.py"
CLI = str(Path(sys.executable).with_name("verl-rewards"))
ROW = {"data_source": "bench", "solution_str": "1", "ground_truth": "1"}


# -- the bare peer: aiohttp, parse the body, answer a constant --------------------------------


def bare_server(port: int) -> None:
    from aiohttp import web

    async def handle(request: web.Request) -> web.Response:
        await request.json()
        return web.json_response(1.0)

    app = web.Application()
    app.router.add_post("/slime", handle)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


# -- processes -------------------------------------------------------------------------------------


def launch(argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """Start a server that prints `listening on http://...` (or, for the bare one, a port)."""
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env)
    found: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "listening on " in line:
                found.put(line.split("listening on ")[1].split()[0])

    threading.Thread(target=pump, daemon=True).start()
    return proc, found.get(timeout=180)


def wait_ready(url: str, timeout_s: float = 180) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=5):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} never became ready")


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- load --------------------------------------------------------------------------------------------


async def load(url: str, path: str, payload: Any, clients: int, seconds: float,
               warmup_s: float = 1.0) -> list[float]:
    """``clients`` keep-alive clients posting ``payload`` back to back; latencies of the
    requests that finished in the measured window (after ``warmup_s``)."""
    import aiohttp

    latencies: list[float] = []
    began = time.perf_counter()
    start, end = began + warmup_s, began + warmup_s + seconds
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def client() -> None:
            while (now := time.perf_counter()) < end:
                async with session.post(url + path, json=payload) as response:
                    response.raise_for_status()
                    await response.read()
                if now >= start:
                    latencies.append(time.perf_counter() - now)

        await asyncio.gather(*(client() for _ in range(clients)))
    return latencies


def summary(latencies: list[float], seconds: float, per_request: int) -> tuple[float, float, float]:
    """(items/s, p50 ms, p99 ms)."""
    cuts = statistics.quantiles(latencies, n=100)
    return len(latencies) * per_request / seconds, cuts[49] * 1000, cuts[98] * 1000


def line(name: str, figures: tuple[float, float, float], unit: str) -> str:
    rate, p50, p99 = figures
    return f"  {name:<34} {rate:>10,.0f} {unit}/s   p50 {p50:7.1f} ms   p99 {p99:7.1f} ms"


# -- part 1 ------------------------------------------------------------------------------------------


def part_single(seconds: float, clients: int, rounds: int) -> float:
    payload = {"prompt": "p", "response": "1", "label": "1"}
    port = free_port()
    bare = subprocess.Popen([sys.executable, __file__, "--bare-server", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    proc = None
    try:
        _wait_port(port)
        proc, url = launch([CLI, "serve", "--port", "0", f"reward.path={REWARDS}",
                            "reward.name=trivial", "reward.executor=local", "--dev"])
        wait_ready(url)
        sides: dict[str, list[float]] = {"bare": [], "serve": []}
        for _ in range(rounds):  # alternated: a busy machine's noise falls on both sides
            sides["bare"] += asyncio.run(load(f"http://127.0.0.1:{port}", "/slime", payload,
                                              clients, seconds))
            sides["serve"] += asyncio.run(load(url, "/slime", payload, clients, seconds))
    finally:
        stop(bare)
        if proc is not None:
            stop(proc)
    bare_figures = summary(sides["bare"], seconds * rounds, 1)
    serve_figures = summary(sides["serve"], seconds * rounds, 1)
    ratio = serve_figures[0] / bare_figures[0]
    print(f"1. single-sample requests, {clients} keep-alive clients, trivial reward (local executor), "
          f"{rounds} alternated rounds of {seconds:g} s")
    print(line("bare aiohttp (parse JSON, answer)", bare_figures, "req"))
    print(line("verl-rewards serve /slime", serve_figures, "req"))
    print(f"  ratio {ratio:.2f}x (aim >= 0.6x)")
    return ratio


def _wait_port(port: int, timeout_s: float = 60) -> None:
    import socket

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


# -- part 2 ------------------------------------------------------------------------------------------


def part_batches(seconds: float, batch: int, clients: int, rounds: int) -> float:
    import ray

    from verl_rewards import Scorer

    # worker_num_cpus=0: both pools (2 workers each) live side by side; only the side
    # being measured is busy, and the rounds alternate.
    cfg = {"path": str(REWARDS), "name": "cpu_3ms", "kwargs": {"ms": 2.0}, "executor": "ray",
           "num_workers": 2, "worker_num_cpus": 0, "timeout_s": 30}
    rows = [ROW] * batch
    counts = sorted({1, clients})
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    proc = None
    try:
        env = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address}
        overrides = [f"reward.{k}={v}" for k, v in cfg.items() if k != "kwargs"] + ["reward.kwargs.ms=2.0"]
        proc, url = launch([CLI, "serve", "--port", "0", *overrides], env)
        with Scorer.from_config(cfg) as scorer:
            scorer.score(rows)  # warm: workers up and resolved
            wait_ready(url)
            inproc: list[float] = []
            served: dict[int, list[float]] = {n: [] for n in counts}
            for _ in range(rounds):
                inproc += _in_process(scorer, rows, seconds)
                for n in counts:
                    served[n] += asyncio.run(load(url, "/v1/score", {"samples": rows}, n, seconds))
    finally:
        if proc is not None:
            stop(proc)
        ray.shutdown()
    base = summary(inproc, seconds * rounds, batch)
    print(f"2. {batch}-sample requests, 2 Ray workers, 2 ms CPU reward, {rounds} alternated rounds "
          f"of {seconds:g} s")
    print(line("in-process Scorer (same pool)", base, "sample"))
    ratio = 0.0
    for n in counts:
        figures = summary(served[n], seconds * rounds, batch)
        ratio = figures[0] / base[0]
        print(line(f"verl-rewards serve ({n} client{'s' if n > 1 else ''})", figures, "sample"))
        print(f"  ratio {ratio:.2f}x (aim >= 0.85x)")
    return ratio


def _in_process(scorer: Any, rows: list[dict[str, str]], seconds: float) -> list[float]:
    latencies = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        began = time.perf_counter()
        scorer.score(rows)
        latencies.append(time.perf_counter() - began)
    return latencies


# -- part 3 ------------------------------------------------------------------------------------------
#
# The load generator for part 3 is a lean HTTP/1.1 keep-alive client (request bytes built
# once, the answer read by its Content-Length): aiohttp's client costs about as much CPU per
# request as the service does, and on two shared cores it, not the service, was the limit.
# Both routes are driven by the same client code in the same process run, and the server's
# CPU time per item (from /proc) is reported next to the rates: the figure that depends least
# on what else the machine is doing.

GSM8K_ROW = {"data_source": "openai/gsm8k", "solution_str": "#### 72", "ground_truth": "72"}
CANDIDATE = {"messages": [{"role": "assistant", "blocks": [{"type": "text", "text": "#### 72"}]}]}


class Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection; :meth:`request` sends one request and returns
    (status, body). Reads a Content-Length or a chunked body."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self.transport: asyncio.Transport | None = None

    @classmethod
    async def open(cls, host: str, port: int) -> Connection:
        _, conn = await asyncio.get_running_loop().create_connection(cls, host, port)
        return conn

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if self._waiter is not None and not self._waiter.done():
            answer = _parse_answer(self._buffer)
            if answer is not None:
                self._waiter.set_result(answer)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(ConnectionError(f"connection lost: {exc}"))

    async def request(self, raw: bytes) -> tuple[int, bytes]:
        assert self.transport is not None
        self._waiter = asyncio.get_running_loop().create_future()
        self.transport.write(raw)
        return await self._waiter

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def _parse_answer(buffer: bytearray) -> tuple[int, bytes] | None:
    """One whole answer from the front of ``buffer`` (removed from it), or None yet."""
    head_end = buffer.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    head = bytes(buffer[:head_end]).lower()
    status = int(head[9:12])
    at = head.find(b"\r\ncontent-length:")
    if at >= 0:
        line_end = head.find(b"\r\n", at + 2)
        length = int(head[at + 17:line_end if line_end > 0 else len(head)])
        if len(buffer) < head_end + 4 + length:
            return None
        body = bytes(buffer[head_end + 4:head_end + 4 + length])
        del buffer[:head_end + 4 + length]
        return status, body
    body, pos = b"", head_end + 4  # chunked
    while True:
        line_end = buffer.find(b"\r\n", pos)
        if line_end < 0:
            return None
        size = int(bytes(buffer[pos:line_end]).split(b";")[0], 16)
        if len(buffer) < line_end + 2 + size + 2:
            return None
        body += bytes(buffer[line_end + 2:line_end + 2 + size])
        pos = line_end + 2 + size + 2
        if size == 0:
            del buffer[:pos]
            return status, body


def post(path: str, payload: Any = None, headers: str = "") -> bytes:
    """A keep-alive POST's bytes (``headers``: extra ``Name: value\\r\\n`` lines)."""
    import json

    return post_raw(path, b"" if payload is None else json.dumps(payload).encode(), headers)


def post_raw(path: str, body: bytes, headers: str = "") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{headers}\r\n").encode() + body


def ok(status: int, body: bytes, expect: bytes) -> None:
    if status != 200 or expect not in body:
        raise RuntimeError(f"unexpected answer {status}: {body[:300]!r}")


def native_item(samples: int) -> Any:
    raw = post("/v1/score", {"samples": [GSM8K_ROW] * samples})

    async def item(conn: Connection) -> None:
        ok(*await conn.request(raw), b'"scores": [1.0')

    return item


SESSION_IDS = itertools.count()
RUN = os.urandom(6).hex()  # session ids unique across runs against one server
CREATE = b'{"split": "train", "index": 0}'
SUBMIT = b'{"name": "submit", "input": {"answer": "#### 72"}}'


async def episode(conn: Connection) -> None:
    """One ORS episode: create a session, submit one answer, delete the session."""
    sid = f"X-Session-ID: {RUN}-{next(SESSION_IDS)}\r\n"
    ok(*await conn.request(post_raw("/create", CREATE, sid)), b'"sid"')
    ok(*await conn.request(post_raw("/call", SUBMIT, sid)), b'"reward":1.0')
    ok(*await conn.request(post_raw("/delete", b"", sid)), b'"sid"')


def group_item(size: int) -> Any:
    """A ``size``-candidate ``score_group`` on the connection's own session (created on first use)."""
    sessions: dict[int, bytes] = {}
    body = {"candidates": [CANDIDATE] * size}

    async def item(conn: Connection) -> None:
        raw = sessions.get(id(conn))
        if raw is None:
            sid = f"X-Session-ID: group-{RUN}-{next(SESSION_IDS)}\r\n"
            ok(*await conn.request(post("/create", {"split": "train", "index": 0}, sid)), b'"sid"')
            raw = sessions[id(conn)] = post("/score_group", body, sid)
        ok(*await conn.request(raw), b"event: end")

    return item


def server_cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Round(NamedTuple):
    """One side's measured window: items/s, latencies, server and client CPU per item."""

    rate: float
    latencies: list[float]
    server_cpu_ms: float
    client_cpu_ms: float


async def drive(url: str, pid: int, item: Any, clients: int, seconds: float,
                warmup_s: float = 1.0) -> Round:
    """``clients`` keep-alive connections running ``item`` back to back; the items that
    finished in the measured window (after ``warmup_s``)."""
    host, port = url.removeprefix("http://").split(":")
    conns = [await Connection.open(host, int(port)) for _ in range(clients)]
    latencies: list[float] = []
    began = time.perf_counter()
    start, end = began + warmup_s, began + warmup_s + seconds

    async def client(conn: Connection) -> None:
        while (now := time.perf_counter()) < end:
            await item(conn)
            done = time.perf_counter()
            if start <= done < end:
                latencies.append(done - now)

    async def meter() -> tuple[float, float]:
        await asyncio.sleep(start - time.perf_counter())
        server, mine = server_cpu_s(pid), time.process_time()
        await asyncio.sleep(end - time.perf_counter())
        return server_cpu_s(pid) - server, time.process_time() - mine

    try:
        *_, (server, mine) = await asyncio.gather(*(client(c) for c in conns), meter())
    finally:
        for conn in conns:
            conn.close()
    n = max(len(latencies), 1)
    return Round(len(latencies) / seconds, latencies, server / n * 1000, mine / n * 1000)


def ors_line(name: str, rounds: list[Round], per_item: int, unit: str) -> str:
    cuts = statistics.quantiles([x for r in rounds for x in r.latencies], n=100)
    rate = statistics.median(r.rate for r in rounds) * per_item
    server = statistics.median(r.server_cpu_ms for r in rounds)
    client = statistics.median(r.client_cpu_ms for r in rounds)
    return (f"  {name:<38} {rate:>9,.0f} {unit}/s   p50 {cuts[49] * 1000:6.1f} ms   p99 {cuts[98] * 1000:6.1f} ms"
            f"   server CPU {server:6.2f} ms, client CPU {client:5.2f} ms per item")


def median_ratio(ors: list[Round], native: list[Round]) -> float:
    """The median over rounds of each round's ORS/native rate (the pairs ran back to back)."""
    return statistics.median(o.rate / n.rate for o, n in zip(ors, native))


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


SEED = post_raw("/seed_session", b"{}")


async def minimal_post(conn: Connection) -> None:
    """The cheapest POST with a body: NeMo-Gym's ``/seed_session`` (read, parsed, ``{}``)."""
    ok(*await conn.request(SEED), b"{}")


async def create_delete(conn: Connection) -> None:
    """An episode without its call: what a session costs."""
    sid = f"X-Session-ID: {RUN}-{next(SESSION_IDS)}\r\n"
    ok(*await conn.request(post_raw("/create", CREATE, sid)), b'"sid"')
    ok(*await conn.request(post_raw("/delete", b"", sid)), b'"sid"')


def part_ors(seconds: float, clients: int, batch: int, batch_clients: int, rounds: int) -> float:
    import json
    import tempfile

    sides = {"native 1": native_item(1), "ors episode": episode, "create+delete": create_delete,
             "minimal POST": minimal_post, "native group": native_item(batch), "ors group": group_item(batch)}
    results: dict[str, list[Round]] = {name: [] for name in sides}
    loads = [load_average()]
    with tempfile.TemporaryDirectory() as tmp:
        tasks = Path(tmp) / "tasks.jsonl"
        tasks.write_text(json.dumps({"data_source": "openai/gsm8k", "prompt": "What is 6*12?",
                                     "ground_truth": "72"}) + "\n")
        env = {**os.environ, "OPENREWARD_DISABLE_UPDATE_CHECK": "1"}
        proc, url = launch([CLI, "serve", "--port", "0", "--tasks", str(tasks), "reward.plugin=gsm8k",
                            "reward.executor=local", "--dev", "--max-sessions", "100000"], env)
        try:
            wait_ready(url)
            for _ in range(rounds):  # interleaved: a busy machine's noise falls on every side
                for name, item in sides.items():
                    n = batch_clients if "group" in name else clients
                    results[name].append(asyncio.run(drive(url, proc.pid, item, n, seconds)))
                loads.append(load_average())
        finally:
            stop(proc)
    print(f"3. the Open Reward Standard routes vs /v1/score, same service (gsm8k, local executor), "
          f"{rounds} interleaved rounds of {seconds:g} s, medians over rounds; load average "
          f"{loads[0]} at start, {loads[-1]} at end")
    print(ors_line(f"/v1/score, 1 sample ({clients} clients)", results["native 1"], 1, "req"))
    print(ors_line("ORS episodes: create+submit+delete", results["ors episode"], 1, "ep"))
    ratio = median_ratio(results["ors episode"], results["native 1"])
    print(f"  ratio {ratio:.2f}x (aim >= 0.5x; latency: the whole episode's)")
    cpu = {name: statistics.median(r.server_cpu_ms for r in rounds_) for name, rounds_ in results.items()}
    print(f"  where an episode's server CPU goes: a minimal POST (/seed_session {{}}) {cpu['minimal POST']:.2f} ms; "
          f"/create + /delete {cpu['create+delete']:.2f} ms; so /call about "
          f"{cpu['ors episode'] - cpu['create+delete']:.2f} ms, against {cpu['native 1']:.2f} ms for a "
          f"one-sample /v1/score")
    print(ors_line(f"/v1/score, {batch} samples ({batch_clients} clients)", results["native group"],
                   batch, "sample"))
    print(ors_line(f"ORS score_group, {batch} candidates", results["ors group"], batch, "sample"))
    print(f"  ratio {median_ratio(results['ors group'], results['native group']):.2f}x "
          f"(aim: the same samples/s)")
    stage_profile(batch)
    return ratio


def stage_profile(batch: int, repeat: int = 50) -> None:
    """The request-side stages of a ``batch``-sample call on each route, timed in this
    process (CPU time, best of 7): what differs between them besides the scoring."""
    import json

    os.environ.setdefault("OPENREWARD_LOG_LEVEL", "CRITICAL")  # openreward logs every call
    from verl_rewards.results import BatchResult, Provenance
    from verl_rewards.serve.intake import MAX_JSON_DEPTH, deeper_than
    from verl_rewards.serve.ors.answers import group_answer
    from verl_rewards.serve.ors.candidates import plain_answers
    from verl_rewards.serve.ors.sse import event, result_events
    from verl_rewards.serve.ors.tasks import Task
    from verl_rewards.serve.protocols import parse_native
    from verl_rewards.wire import dumps, result_to_json

    native_raw = json.dumps({"samples": [GSM8K_ROW] * batch}).encode()
    group_raw = json.dumps({"candidates": [CANDIDATE] * batch}).encode()
    native_body, group_body = json.loads(native_raw), json.loads(group_raw)
    task = Task("openai/gsm8k", "What is 6*12?", "72")
    result = BatchResult([1.0] * batch, [None] * batch, ["ok"] * batch,
                         {"acc": [True] * batch, "pred": ["72"] * batch}, Provenance("plugin", "gsm8k", "gsm8k"))

    def best_us(fn: Any) -> float:
        times = []
        for _ in range(7):
            began = time.process_time()
            for _ in range(repeat):
                fn()
            times.append((time.process_time() - began) / repeat)
        return min(times) * 1e6

    def group_samples() -> Any:
        found = plain_answers(group_body, MAX_JSON_DEPTH)
        assert found is not None
        return task.samples(found.answers)

    stages = [
        ("JSON parse", best_us(lambda: json.loads(native_raw)), best_us(lambda: json.loads(group_raw))),
        ("depth check, fields, samples",
         best_us(lambda: (deeper_than(native_body, MAX_JSON_DEPTH), parse_native(native_body, None))),
         best_us(group_samples)),
        ("the answer", best_us(lambda: dumps(result_to_json(result))),
         best_us(lambda: event("task_id", "0" * 32) + result_events(group_answer(result)))),
    ]
    print(f"  request-side stages of a {batch}-sample call, in this process (us, best of 7): "
          + "; ".join(f"{name} {n:.0f} vs {g:.0f}" for name, n, g in stages)
          + " (/v1/score vs score_group)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measured time per side and round")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds per side")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--batch-clients", type=int, default=2,
                        help="concurrent 256-sample clients in part 2 (one batch scores while "
                             "the next one travels)")
    parser.add_argument("--part", choices=["1", "2", "3", "both", "all"], default="all",
                        help="both: parts 1 and 2; all: every part")
    parser.add_argument("--bare-server", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_server:
        bare_server(args.bare_server)
        return
    print(f"verl-rewards serve benchmark ({os.cpu_count()} CPUs)")
    if args.part in ("1", "both", "all"):
        part_single(args.seconds, args.clients, args.rounds)
    if args.part in ("2", "both", "all"):
        part_batches(args.seconds, args.batch, args.batch_clients, args.rounds)
    if args.part in ("3", "all"):
        part_ors(args.seconds, args.clients, args.batch, args.batch_clients, args.rounds)


if __name__ == "__main__":
    main()
