"""code_exec throughput next to bare subprocesses, per test form and language, in one run.

    python plugins/code/benchmarks/bench_sandbox.py [--rounds 3] [--workers 2]
        [--forms asserts,stdin] [--languages python,cpp,java,javascript,rust,c] [--cold] [--profile RUNS]

Problems (``problems.py``, written for this project): 24 HumanEval-like
problems, each a canonical solution and its ``check(candidate)`` block scored
as one assert test (the asserts form, Python); 3 stdin/stdout problems with 3
tests each, solved in every language (the stdin form). A pool of
``--workers`` processes scores every problem with ``compute_score`` (the warm
sandbox); a second pool runs the same programs as bare subprocesses with no
sandbox (``python -I -c program`` for asserts; for stdin the program's own
command, the same as in the sandbox: ``python -I -c``, the binary, ``java``,
``node``), with the sandbox's environment. The two alternate, round by round, so other load on the machine
weighs on both alike; the ratio is sandbox throughput over bare throughput.
Compiled languages are compiled before timing (each worker caches its
compiles); ``compile`` lines give a fresh compile's time in the sandbox and
bare. ``--cold`` adds a pool that starts a fresh sandbox per run (the cold
path). ``--profile RUNS`` profiles the scoring process on one problem.

Published figures, per core, each on its own problem mix (many more tests per
problem, heavier programs): SandboxFusion ~0.23 problems/s, verl's prime
executor 0.39, ScaleBox 0.61.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import verl_rewards_code
from verl_rewards_code.code_exec import compute_score
from verl_rewards_code.sandbox import Limits, Sandbox, languages, warm
from verl_rewards_code.sandbox.launch import program_env

sys.path.insert(0, str(Path(__file__).parent))
from problems import ASSERT_PROBLEMS, STDIN_PROBLEMS

PUBLISHED = {"SandboxFusion": 0.23, "verl prime executor": 0.39, "ScaleBox": 0.61}
FENCE = {"python": "python", "cpp": "cpp", "java": "java", "javascript": "javascript", "rust": "rust", "c": "c"}


# ---------------------------------------------------------------- the tasks


def _prepare_worker(cold: bool, tasks: list[tuple[str, str]]) -> None:
    """Start this worker's sandbox and compile what it will run (each worker has its own cache)."""
    if cold:
        warm.server_for = lambda isolation, python: None  # every run starts a fresh sandbox
    for response, truth in tasks:
        compute_score("bench", response, truth)


def sandboxed(response: str, truth: str) -> float:
    """One problem scored by code_exec (every test a sandboxed run)."""
    return float(compute_score("bench", response, truth)["score"])


def bare(command: list[str], inputs: list[str], outputs: list[str], cwd: str, env: dict[str, str]) -> float:
    """One problem's programs as bare subprocesses: the fraction of tests passed."""
    passed = 0
    for stdin, expected in zip(inputs, outputs):
        done = subprocess.run(command, input=stdin.encode(), capture_output=True, timeout=120, cwd=cwd, env=env)
        passed += done.returncode == 0 and done.stdout.decode().split() == expected.split()
    return passed / len(inputs)


class Case:
    """One (form, language): its problems as sandbox tasks and as bare tasks."""

    def __init__(self, form: str, language: str, build: str) -> None:
        self.form, self.language = form, language
        self.sandbox_tasks: list[tuple[str, str]] = []
        self.bare_tasks: list[tuple[list[str], list[str], list[str], str, dict[str, str]]] = []
        if form == "asserts":
            os.makedirs(build)
            for p in ASSERT_PROBLEMS:
                block = f"{p.check}\ncheck({p.entry_point})\n"
                self.sandbox_tasks.append((f"```python\n{p.solution}```", json.dumps({"asserts": [block]})))
                command = [sys.executable, "-I", "-c", p.solution + block]
                self.bare_tasks.append((command, [""], [""], build, program_env(build)))
            self.runs = len(ASSERT_PROBLEMS)
            return
        for p in STDIN_PROBLEMS:
            source = p.solutions[language]
            self.sandbox_tasks.append((f"```{FENCE[language]}\n{source}```",
                                       json.dumps({"inputs": p.inputs, "outputs": p.outputs})))
            command, cwd, env = bare_command(language, source, os.path.join(build, p.name))
            self.bare_tasks.append((command, p.inputs, p.outputs, cwd, env))
        self.runs = sum(len(p.inputs) for p in STDIN_PROBLEMS)


def bare_command(language: str, source: str, where: str) -> tuple[list[str], str, dict[str, str]]:
    """The command that runs ``source`` bare (the sandbox's own, compiled outside it first),
    its working directory and environment (the sandbox's: the host's may slow runtimes down)."""
    io, work = os.path.join(where, "io"), os.path.join(where, "work")
    if language == "python":
        os.makedirs(work)
        return [sys.executable, "-I", "-c", source], work, program_env(work)
    name = languages.source_name(language, source)
    os.makedirs(io)
    os.makedirs(os.path.join(work, "out"))
    Path(io, name).write_text(source)
    build = os.path.join(work, "out")
    if language in languages.COMPILED:
        job = languages.compile_job(language, source, Sandbox.resolve().compile_limits, build, cgroups=True)
        assert job.command is not None
        subprocess.run([part.format(io=io) for part in job.command], cwd=work, check=True, capture_output=True)
    job = languages.run_job(language, source, build, Limits(), cgroups=True)
    assert job.command is not None
    for file, text in job.files.items():  # what the command reads beside the program (node's preload)
        Path(io, file).write_text(text)
    return [part.format(io=io, build=build) for part in job.command], work, {**program_env(work), **job.env}


# ----------------------------------------------------------- the measuring


def timed(pool: ProcessPoolExecutor, function: Callable[..., float], tasks: list[Any]) -> float:
    started = time.perf_counter()
    scores = list(pool.map(function, *zip(*tasks)))
    elapsed = time.perf_counter() - started
    assert scores == [1.0] * len(tasks), f"{function.__name__}: not every canonical solution passed: {scores}"
    return elapsed


def measure(case: Case, rounds: int, workers: int, cold: bool) -> dict[str, Any]:
    """Throughput per core of each pool on ``case``, the pools interleaved round by round."""
    pools = {name: ProcessPoolExecutor(workers, initializer=_prepare_worker, initargs=(name == "cold", case.sandbox_tasks))
             for name in ("warm", *(["cold"] if cold else []))}
    pools["bare"] = ProcessPoolExecutor(workers)
    try:
        return _rounds(case, pools, rounds, workers)
    finally:
        for pool in pools.values():
            pool.shutdown()


def _rounds(case: Case, pools: dict[str, ProcessPoolExecutor], rounds: int, workers: int) -> dict[str, Any]:
    timed(pools["bare"], bare, case.bare_tasks)  # the page cache warm for the bare floor too
    walls: dict[str, list[float]] = {name: [] for name in pools}
    for index in range(rounds):
        order = list(pools) if index % 2 == 0 else list(reversed(pools))
        for name in order:
            function, tasks = (bare, case.bare_tasks) if name == "bare" else (sandboxed, case.sandbox_tasks)
            walls[name].append(timed(pools[name], function, tasks))
    problems = len(case.sandbox_tasks)
    per_core = {name: [problems / wall / workers for wall in values] for name, values in walls.items()}
    ratios = [s / b for s, b in zip(per_core["warm"], per_core["bare"])]
    return {"per_core": {k: statistics.median(v) for k, v in per_core.items()}, "ratios": ratios,
            "problems": problems, "runs": case.runs}


def compile_times(language: str, repeats: int = 3) -> tuple[float, float]:
    """Median ms of a fresh compile (a new source each time) in the sandbox, and bare."""
    source = STDIN_PROBLEMS[0].solutions[language]
    comment = "//" if language != "python" else "#"
    sandbox = Sandbox.resolve().for_language(language)
    inside, outside = [], []
    for _ in range(repeats):
        fresh = f"{source}{comment} {uuid.uuid4().hex}\n"
        started = time.perf_counter()
        assert sandbox.compile(fresh) is None
        inside.append(time.perf_counter() - started)
        with tempfile.TemporaryDirectory() as where:
            started = time.perf_counter()
            bare_command(language, fresh, where)
            outside.append(time.perf_counter() - started)
    return statistics.median(inside) * 1000, statistics.median(outside) * 1000


def profile(runs: int) -> None:
    """Where one scoring process spends its time on the first asserts problem."""
    problem = ASSERT_PROBLEMS[0]
    block = f"{problem.check}\ncheck({problem.entry_point})\n"
    response, truth = f"```python\n{problem.solution}```", json.dumps({"asserts": [block]})
    sandboxed(response, truth)
    profiler = cProfile.Profile()
    own = time.process_time()
    started = time.perf_counter()
    profiler.enable()
    for _ in range(runs):
        sandboxed(response, truth)
    profiler.disable()
    wall, own = (time.perf_counter() - started) / runs, (time.process_time() - own) / runs
    print(f"{runs} scorings of {problem.entry_point}: {wall * 1000:.1f} ms wall, {own * 1000:.1f} ms CPU of the scoring process each")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(18)


# ------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--forms", default="asserts,stdin")
    parser.add_argument("--languages", default=",".join(languages.LANGUAGES))
    parser.add_argument("--cold", action="store_true", help="also measure a fresh sandbox per run")
    parser.add_argument("--profile", type=int, default=0, metavar="RUNS", help="instead: profile the scoring process")
    args = parser.parse_args()
    if args.profile:
        profile(args.profile)
        return
    sandbox = Sandbox.resolve()
    print(f"verl_rewards_code from {verl_rewards_code.__file__}")
    print(f"isolation: {sandbox.isolation.describe()}")
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the start")
    print(f"{args.workers} workers, {args.rounds} rounds, the sandbox and the bare floor interleaved\n")
    build = tempfile.mkdtemp(prefix="bench-sandbox-")
    header = f"{'form':8s}{'language':11s}{'problems':>9s}{'runs':>6s}  {'sandbox problems/s/core':>24s}{'runs/s/core':>12s}"
    header += f"{'bare problems/s/core':>22s}{'sandbox/bare (median, range)':>31s}"
    header += f"{'cold problems/s/core':>22s}" if args.cold else ""
    print(header)
    try:
        for form in args.forms.split(","):
            for language in (["python"] if form == "asserts" else args.languages.split(",")):
                case = Case(form, language, os.path.join(build, f"{form}-{language}"))
                found = measure(case, args.rounds, args.workers, args.cold)
                rate, ratios = found["per_core"], found["ratios"]
                line = f"{form:8s}{language:11s}{found['problems']:>9d}{found['runs']:>6d}  {rate['warm']:>24.2f}"
                line += f"{rate['warm'] * found['runs'] / found['problems']:>12.2f}{rate['bare']:>22.2f}"
                line += f"{statistics.median(ratios):>14.2f}x ({min(ratios):.2f}-{max(ratios):.2f})".ljust(31)
                line += f"{rate['cold']:>22.2f}" if args.cold else ""
                print(line, flush=True)
        print()
        for language in args.languages.split(",") if "stdin" in args.forms else []:
            if language in languages.COMPILED:
                inside, outside = compile_times(language)
                print(f"compile {language}: {inside:.0f} ms in the sandbox, {outside:.0f} ms bare (median of 3 fresh sources)")
    finally:
        shutil.rmtree(build, ignore_errors=True)
    print("\npublished, per core, on their own problem mixes: "
          + ", ".join(f"{name} {value} problems/s" for name, value in PUBLISHED.items()))
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
