"""code_exec throughput next to bare subprocesses and next to verl's prime_code, per test form and language, in one run.

    python plugins/code/benchmarks/bench_sandbox.py [--rounds 5] [--workers 2]
        [--forms asserts,stdin,mix] [--languages python,c,cpp,java,javascript,rust]
        [--cold] [--before PATH] [--profile RUNS]

Problems (``problems.py``, written for this project): 24 HumanEval-like
problems, each a canonical solution and its ``check(candidate)`` block scored
as one assert test (the ``asserts`` form, Python); 3 stdin/stdout problems
with 10 tests each, solved in every language (``stdin``); and a mix in the
APPS/TACO form verl's ``prime_code`` scores (``mix``): the 19 HumanEval-like
problems whose checks are plain ``assert candidate(...) == value`` lines, as
call-based tests, and the 3 stdin problems in Python.

A pool of ``--workers`` processes scores every problem with ``compute_score``
(the warm sandbox: the tests of a sample share one sandbox); a second pool
runs the same programs as bare subprocesses with no sandbox (``python -I -c
program`` for asserts; for stdin the program's own command, the same as in
the sandbox: ``python -I -c``, the binary, ``java``, ``node``, with the
sandbox's environment); for the mix, a pool scores the same samples with
verl 0.9.1's ``prime_code.compute_score`` as verl's ``default_compute_score``
calls it. The pools alternate, round by round, so that other load on the
machine weighs on all alike; the ratio is sandbox throughput over the other's,
per round, and its median is reported. Compiled languages are compiled before
timing (each worker caches its compiles); ``compile`` lines give a fresh
compile's time in the sandbox and bare. ``--cold`` adds a pool that starts a
fresh sandbox per run (the path before the warm server); ``--before PATH``
adds a pool that imports ``verl_rewards_code`` from ``PATH`` (another
checkout's ``plugins/code``: the code before a change, measured in the same
run). ``--profile RUNS`` instead shows where a warm run's time goes, phase by
phase, and the CPU of all its processes.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import verl_rewards_code
from verl_rewards_code.code_exec import compute_score
from verl_rewards_code.sandbox import Limits, Sandbox, languages, warm
from verl_rewards_code.sandbox.launch import program_env

sys.path.insert(0, str(Path(__file__).parent))
from problems import ASSERT_PROBLEMS, CALL_PROBLEMS, STDIN_PROBLEMS

# Published throughput of sandboxes used for RL, problems/s per vCPU, each on 8,192 Python
# problems of a public verifiable-coding set (their problems, their tests, their machines:
# not like for like with the problems here).
PUBLISHED = (("ScaleBox", 0.31), ("verl prime_code", 0.19), ("SandboxFusion", 0.12))
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
    return float(compute_score("taco", response, truth)["score"])


def bare(command: list[str], inputs: list[str], outputs: list[str], cwd: str, env: dict[str, str]) -> float:
    """One problem's programs as bare subprocesses: the fraction of tests passed."""
    passed = 0
    for stdin, expected in zip(inputs, outputs):
        done = subprocess.run(command, input=stdin.encode(), capture_output=True, timeout=120, cwd=cwd, env=env)
        passed += done.returncode == 0 and done.stdout.decode().split() == expected.split()
    return passed / len(inputs)


_prime: list[ModuleType] = []


def _load_prime_code() -> None:
    """verl 0.9.1's prime_code, loaded from the installed verl as a package of its own (not
    through ``import verl``, which imports torch), as ``test_code_prime_parity.py`` does."""
    verl = importlib.util.find_spec("verl")
    if verl is None or not verl.submodule_search_locations:
        raise SystemExit("--forms mix needs verl installed (pip install verl==0.9.1)")
    folder = Path(next(iter(verl.submodule_search_locations))) / "utils" / "reward_score" / "prime_code"
    name = "verl_prime_code_as_installed"
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py", submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _prime.append(module)


def primed(response: str, truth: str) -> float:
    """One problem scored by verl's prime_code (continuous, as verl's default_compute_score calls it)."""
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        success, _ = _prime[0].compute_score(response, truth, continuous=True)
    return float(success)


class Case:
    """One (form, language): its problems as scored tasks for each pool, and its tests."""

    def __init__(self, form: str, language: str, build: str) -> None:
        self.form, self.language = form, language
        self.expected: list[float] = []  # each task's score (default: every one 1.0)
        self.tests = 0
        self.sandbox_tasks: list[tuple[str, str]] = []
        self.other_tasks: list[Any] = []
        self.other: Callable[..., float] = bare
        if form == "asserts":
            os.makedirs(build)
            for p in ASSERT_PROBLEMS:
                block = f"{p.check}\ncheck({p.entry_point})\n"
                self.sandbox_tasks.append((f"```python\n{p.solution}```", json.dumps({"asserts": [block]})))
                command = [sys.executable, "-I", "-c", p.solution + block]
                self.other_tasks.append((command, [""], [""], build, program_env(build)))
            self.tests = len(ASSERT_PROBLEMS)
        elif form == "mix":
            self.other = primed
            for program, truth, tests, right in mix_samples():
                self.sandbox_tasks.append((f"Here is my solution.\n```python\n{program}```\n", json.dumps(truth)))
                self.expected.append(1.0 if right else 0.0)
                self.tests += tests
            self.other_tasks = list(self.sandbox_tasks)
        else:
            for p in STDIN_PROBLEMS:
                source = p.solutions[language]
                self.sandbox_tasks.append((f"```{FENCE[language]}\n{source}```",
                                           json.dumps({"inputs": p.inputs, "outputs": p.outputs})))
                command, cwd, env = bare_command(language, source, os.path.join(build, p.name))
                self.other_tasks.append((command, p.inputs, p.outputs, cwd, env))
            self.tests = sum(len(p.inputs) for p in STDIN_PROBLEMS)

    def scores(self) -> list[float]:
        return self.expected or [1.0] * len(self.sandbox_tasks)

    @property
    def other_name(self) -> str:
        return "prime_code" if self.form == "mix" else "bare"


def mix_samples() -> list[tuple[str, dict[str, Any], int, bool]]:
    """``(program, tests, number of tests, right)``: each problem of the mix twice, with its
    canonical solution and with a wrong one (a function that returns None; a program
    that prints 0), as a policy's rollouts come right and wrong."""
    samples = []
    for c in CALL_PROBLEMS:
        count = len(c.tests["inputs"])
        wrong = f"{c.solution}\n\ndef {c.entry_point}(*args):\n    return None\n"
        samples += [(c.solution, c.tests, count, True), (wrong, c.tests, count, False)]
    for p in STDIN_PROBLEMS:
        tests = {"inputs": p.inputs, "outputs": p.outputs}
        samples += [(p.solutions["python"], tests, len(p.inputs), True), ("print(0)\n", tests, len(p.inputs), False)]
    return samples


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


def timed(pool: ProcessPoolExecutor, function: Callable[..., float], tasks: list[Any], expected: list[float]) -> float:
    started = time.perf_counter()
    scores = list(pool.map(function, *zip(*tasks)))
    elapsed = time.perf_counter() - started
    assert scores == expected, f"{function.__name__}: not every sample scored as it should: {scores}"
    return elapsed


def pools_for(case: Case, workers: int, cold: bool, before: str | None) -> dict[str, ProcessPoolExecutor]:
    """The case's pools: the sandbox, the other side (bare or prime_code), and optionally cold and before."""
    pools = {"sandbox": ProcessPoolExecutor(workers, initializer=_prepare_worker, initargs=(False, case.sandbox_tasks))}
    if cold:
        pools["cold"] = ProcessPoolExecutor(workers, initializer=_prepare_worker, initargs=(True, case.sandbox_tasks))
    if before is not None:
        pools["before"] = _spawned_pool(workers, before, case.sandbox_tasks)
    if case.form == "mix":
        pools[case.other_name] = ProcessPoolExecutor(workers, initializer=_load_prime_code)
    else:
        pools[case.other_name] = ProcessPoolExecutor(workers)
    return pools


def _spawned_pool(workers: int, path: str, tasks: list[tuple[str, str]]) -> ProcessPoolExecutor:
    """Workers that import ``verl_rewards_code`` from ``path`` (fresh interpreters: this one has its own loaded)."""
    # A spawned worker takes this process's sys.path: with ``path`` first while they start.
    sys.path.insert(0, path)
    try:
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_prepare_worker, initargs=(False, tasks))
        list(pool.map(_imported_from, range(workers)))  # start them now
    finally:
        sys.path.remove(path)
    return pool


def _imported_from(_: int) -> str:
    return verl_rewards_code.__file__ or ""


def measure(case: Case, rounds: int, workers: int, cold: bool, before: str | None) -> dict[str, Any]:
    """Problems/s of each pool on ``case``, the pools interleaved round by round."""
    pools = pools_for(case, workers, cold, before)
    try:
        if before is not None:
            imported = set(pools["before"].map(_imported_from, range(workers)))
            assert all(path.startswith(os.path.realpath(before)) or path.startswith(before) for path in imported), imported
        return _rounds(case, pools, rounds)
    finally:
        for pool in pools.values():
            pool.shutdown()


def _rounds(case: Case, pools: dict[str, ProcessPoolExecutor], rounds: int) -> dict[str, Any]:
    for name, pool in pools.items():  # warm: the page cache, the JIT-less runtimes' files, prime_code's imports
        function, tasks = (case.other, case.other_tasks) if name == case.other_name else (sandboxed, case.sandbox_tasks)
        timed(pool, function, tasks, case.scores())
    walls: dict[str, list[float]] = {name: [] for name in pools}
    loads = [os.getloadavg()[0]]
    for index in range(rounds):
        order = list(pools) if index % 2 == 0 else list(reversed(pools))
        for name in order:
            function, tasks = (case.other, case.other_tasks) if name == case.other_name else (sandboxed, case.sandbox_tasks)
            walls[name].append(timed(pools[name], function, tasks, case.scores()))
        loads.append(os.getloadavg()[0])
    problems = len(case.sandbox_tasks)
    rates = {name: [problems / wall for wall in values] for name, values in walls.items()}
    ratios = {name: [s / o for s, o in zip(rates["sandbox"], values)] for name, values in rates.items() if name != "sandbox"}
    return {"rate": {k: statistics.median(v) for k, v in rates.items()}, "ratios": ratios, "problems": problems,
            "tests": case.tests, "loads": loads}


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


# ------------------------------------------------------------------- the profile


@contextlib.contextmanager
def cpu_account() -> Iterator[Callable[[], float | None]]:
    """A cgroup of its own for this process and all it starts (the warm server, every run):
    the CPU seconds they used so far (None where no cpuacct hierarchy can be written)."""
    roots = [Path("/sys/fs/cgroup/cpuacct"), Path("/sys/fs/cgroup/cpu,cpuacct")]
    root = next((r for r in roots if (r / "cpuacct.usage").exists()), None)
    group = root / f"verl-rewards-code-bench-{os.getpid()}" if root is not None else None
    try:
        assert group is not None
        group.mkdir()
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except (AssertionError, OSError):
        yield lambda: None
        return
    try:
        yield lambda: int((group / "cpuacct.usage").read_text()) / 1e9
    finally:
        assert root is not None
        # This process and the warm servers it started (they live on until it exits): the
        # group must be empty to go.
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                (root / "cgroup.procs").write_text(pid)
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)  # a run's runner still exiting


def profile(runs: int) -> None:
    """Where a warm run's time goes, phase by phase, for each kind of run, and the CPU of all its processes."""
    from verl_rewards_code.runs import prepare
    from verl_rewards_code.sandbox import phases
    from verl_rewards_code.spec import ProgramTest

    check = ASSERT_PROBLEMS[0]
    stdin = STDIN_PROBLEMS[0]
    kinds = [
        ("any run: `pass`, one test a sample", "python", ProgramTest("", ""), "pass\n", 1),
        ("any run: `pass`, a sample's later tests", "python", ProgramTest("", ""), "pass\n", 10),
        ("assert test (HumanEval-like), one a sample", "python",
         ProgramTest("", None, f"{check.check}\ncheck({check.entry_point})\n"), check.solution, 1),
        ("stdin test, Python, a sample's later tests", "python",
         ProgramTest(stdin.inputs[0], stdin.outputs[0]), stdin.solutions["python"], 10),
        ("stdin test, C++, one a sample", "cpp", ProgramTest(stdin.inputs[0], stdin.outputs[0]), stdin.solutions["cpp"], 1),
        ("stdin test, C++, a sample's later tests", "cpp",
         ProgramTest(stdin.inputs[0], stdin.outputs[0]), stdin.solutions["cpp"], 10),
    ]
    print(f"verl_rewards_code from {verl_rewards_code.__file__}")
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the start")
    with cpu_account() as used:
        base = Sandbox.resolve()
        summary = []
        for title, language, test, code, per_session in kinds:
            sandbox = base.for_language(language)
            run = prepare(test, code)
            for _ in range(3):  # the server, the compile cache, the page cache
                assert sandbox.run(run.source, run.stdin, helper_processes=run.helper_processes).ok
            phases.enable()
            table: dict[str, list[tuple[float, float]]] = {}
            program_cpu: list[float] = []
            cpu_before, own_before, started = used(), time.process_time(), time.perf_counter()
            sessions = max(1, runs // per_session)
            for _ in range(sessions):
                with sandbox.session() as session:
                    runner_cpu = 0.0  # the session's runner serves every test: its CPU carries over
                    for index in range(per_session):
                        result = session.run(run.source, run.stdin, helper_processes=run.helper_processes)
                        assert result.ok, result
                        program_cpu.append(result.cpu_time_s or 0.0)
                        shown = table if per_session == 1 or index > 0 else {}
                        runner_cpu = _add_phases(shown, result.profile, runner_cpu)
            phases.enable(False)
            count = sessions * per_session
            wall = (time.perf_counter() - started) / count * 1000
            own = (time.process_time() - own_before) / count * 1000
            total = None if cpu_before is None else ((used() or 0.0) - cpu_before) / count * 1000
            print(f"\n{title}: {count} runs, {wall:.1f} ms wall each")
            print(f"  {'phase (process: end of phase)':52s}{'wall ms':>9s}{'CPU ms':>9s}  (medians)")
            for name, values in table.items():
                print(f"  {name:52s}{statistics.median(v[0] for v in values):9.2f}{statistics.median(v[1] for v in values):9.2f}")
            program = statistics.median(program_cpu) * 1000
            print(f"  the program's process and its children (rusage): {program:.2f} ms CPU")
            print(f"  the scoring process: {own:.2f} ms CPU")
            if total is not None:
                print(f"  all processes of the run (cpuacct: scorer, server, runner, program): {total:.2f} ms CPU")
            summary.append((title, total, program, own))
    print("\nsummary (ms of CPU per run; fixed = all processes less the program's own process):")
    for title, total, program, own in summary:
        fixed = "n/a" if total is None else f"{total - program:.1f}"
        shown = "n/a" if total is None else f"{total:.1f}"
        print(f"  {title:48s} all {shown:>6s}  program {program:5.1f}  fixed {fixed:>6s}  (scorer {own:.1f})")
    print("\nthe same programs bare (subprocess.run from this process, as the throughput's bare pool runs them):")
    with tempfile.TemporaryDirectory() as where:
        for title, command, stdin in _bare_kinds(where):
            print(f"  {title:48s} all {bare_cpu(command, stdin, runs):6.1f} ms CPU (this process and the child)")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def _bare_kinds(where: str) -> list[tuple[str, list[str], str]]:
    check, stdin = ASSERT_PROBLEMS[0], STDIN_PROBLEMS[0]
    python = [sys.executable, "-I", "-c"]
    cpp, _, _ = bare_command("cpp", stdin.solutions["cpp"], os.path.join(where, "cpp"))
    return [
        ("`python -I -c pass`", [*python, "pass"], ""),
        ("assert test as `python -I -c` (HumanEval-like)",
         [*python, f"{check.solution}{check.check}\ncheck({check.entry_point})\n"], ""),
        ("stdin test, Python", [*python, stdin.solutions["python"]], stdin.inputs[0]),
        ("stdin test, C++ (the compiled binary)", cpp, stdin.inputs[0]),
    ]


def bare_cpu(command: list[str], stdin: str, runs: int) -> float:
    """Median-free mean CPU ms of this process and its child per ``subprocess.run`` of ``command``."""
    def used() -> float:
        own, children = os.times()[:2], os.times()[2:4]
        return sum(own) + sum(children)
    subprocess.run(command, input=stdin.encode(), capture_output=True, check=True)
    before = used()
    for _ in range(runs):
        subprocess.run(command, input=stdin.encode(), capture_output=True, check=True)
    return (used() - before) / runs * 1000


def _add_phases(
    table: dict[str, list[tuple[float, float]]], entries: tuple[tuple[str, str, float, float], ...], runner_cpu: float,
) -> float:
    """Each phase's wall time since the previous phase (any process) and its process's CPU since its previous mark.

    A test's program process starts at 0 s of CPU; its runner at ``runner_cpu``, its CPU at the
    session's previous test's last mark (0 for a new runner). Returns the runner's CPU at this
    test's last mark."""
    events = sorted(entries, key=lambda entry: entry[2])
    if not events:
        return runner_cpu
    last_cpu: dict[str, float] = {"runner": runner_cpu, "program": 0.0}
    previous = events[0][2]
    for process, name, at, cpu in events:
        spent = cpu - last_cpu.get(process, cpu)
        table.setdefault(f"{process}: {name}", []).append(((at - previous) * 1000, spent * 1000))
        last_cpu[process], previous = cpu, at
    return last_cpu["runner"]


# ------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--forms", default="asserts,stdin,mix")
    parser.add_argument("--languages", default=",".join(languages.LANGUAGES))
    parser.add_argument("--cold", action="store_true", help="also measure a fresh sandbox per run")
    parser.add_argument("--before", metavar="PATH", help="also measure verl_rewards_code imported from PATH")
    parser.add_argument("--profile", type=int, default=0, metavar="RUNS", help="instead: where a warm run's time goes")
    args = parser.parse_args()
    if args.profile:
        profile(args.profile)
        return
    sandbox = Sandbox.resolve()
    cores = min(args.workers, os.cpu_count() or 1)
    print(f"verl_rewards_code from {verl_rewards_code.__file__}" + (f"; before: {args.before}" if args.before else ""))
    print(f"isolation: {sandbox.isolation.describe()}")
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the start")
    print(f"{args.workers} workers, {args.rounds} rounds, the pools interleaved; rates are medians of the rounds\n")
    build = tempfile.mkdtemp(prefix="bench-sandbox-")
    mix = None
    try:
        for form in args.forms.split(","):
            for language in (["python"] if form in ("asserts", "mix") else args.languages.split(",")):
                case = Case(form, language, os.path.join(build, f"{form}-{language}"))
                found = measure(case, args.rounds, args.workers, args.cold, args.before)
                report(case, found, cores)
                if form == "mix":
                    mix = (case, found)
        if mix is not None:
            field_table(*mix, args.workers, cores)
        for language in args.languages.split(",") if "stdin" in args.forms else []:
            if language in languages.COMPILED:
                inside, outside = compile_times(language)
                print(f"compile {language}: {inside:.0f} ms in the sandbox, {outside:.0f} ms bare (median of 3 fresh sources)")
    finally:
        shutil.rmtree(build, ignore_errors=True)
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def report(case: Case, found: dict[str, Any], cores: int) -> None:
    """One case's line per pool: problems/s per core, tests/s per core, and the sandbox's ratio to it."""
    rate, loads = found["rate"], found["loads"]
    per_test = found["tests"] / found["problems"]
    print(f"{case.form} {case.language}: {found['problems']} problems, {found['tests']} tests; "
          f"load (1 min) {min(loads):.1f}-{max(loads):.1f} during the rounds")
    for name, value in rate.items():
        line = f"  {name:11s}{value / cores:9.2f} problems/s/core {value * per_test / cores:9.2f} tests/s/core"
        if name != "sandbox":
            ratios = found["ratios"][name]
            line += f"   sandbox/{name}: {statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
        print(line, flush=True)


def field_table(case: Case, found: dict[str, Any], workers: int, cores: int) -> None:
    """The mix in the format the field publishes, next to the published figures."""
    print("\nthe mix, as the field reports throughput:")
    print(f"  {'':34s}{'problems':>9s}{'tests':>7s}{'workers':>8s}{'cores':>6s}{'problems/s':>11s}{'per core':>9s}")
    for name in ("sandbox", "before", "prime_code"):
        if name in found["rate"]:
            value = found["rate"][name]
            label = {"sandbox": "code_exec (this run)", "before": "code_exec before (this run)",
                     "prime_code": "verl 0.9.1 prime_code (this run)"}[name]
            print(f"  {label:34s}{found['problems']:9d}{found['tests']:7d}{workers:8d}{cores:6d}{value:11.2f}"
                  f"{value / cores:9.2f}")
    for name, per_core in PUBLISHED:
        print(f"  {name + ' (published)':34s}{8192:9d}{'':>7s}{'':>8s}{'':>6s}{'':>11s}{per_core:9.2f}")
    print("  (published: their own 8,192 Python problems of a public verifiable-coding set, their tests and "
          "machines: not like for like)\n")


if __name__ == "__main__":
    main()
