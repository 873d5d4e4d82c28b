"""The warm sandbox: one server per worker process, each run forked from it into fresh namespaces.

Real faults: a run that leaves files, shared memory, a daemon, environment and
module state behind for the next; a program aiming kill and ptrace at the
server and at its runner; the server killed while it holds runs; runs from
many threads at once; and Python run in the forked interpreter next to a
fresh one.
"""

from __future__ import annotations

import ast
import logging
import os
import re
import shutil
import signal
import tempfile
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from verl_rewards_code.sandbox import Isolation, Limits, RunResult, Sandbox, launch, warm
from verl_rewards_code.sandbox.owners import owner_tag

LIMITS = Limits(timeout_s=10.0, memory_mb=512, max_output_bytes=64 * 1024, max_processes=8, disk_mb=16)


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    chosen = Sandbox.resolve()
    if shutil.which("unshare") is not None:
        assert chosen.isolation.level == "namespaces", chosen.isolation.describe()
    return chosen


@pytest.fixture
def server(sandbox: Sandbox) -> warm.WarmServer:
    found = warm.server_for(sandbox.isolation, sandbox.python)
    assert found is not None and found.alive(), "namespaces, but no warm server"
    return found


def run(sandbox: Sandbox, source: str, stdin: str = "") -> RunResult:
    result = sandbox.run(textwrap.dedent(source), stdin, LIMITS)
    assert result.setup_error is None, result.setup_error
    return result


LEAVE = """
    import builtins, ctypes, json, os, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    open("left.txt", "w").write("x")
    open("/dev/shm/left", "w").write("x")
    segment = libc.shmget(0x5EED, 4096, 0o1000 | 0o666)  # IPC_CREAT, open to all
    os.environ["LEFT"] = "x"
    json.LEFT = builtins.LEFT = sys.LEFT = "x"
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(60)  # a daemon, meant to outlive the run
        os._exit(0)
    os.wait()
    print(os.getuid(), segment >= 0)
    """

LOOK = """
    import builtins, ctypes, json, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    print([os.listdir("."), os.listdir("/dev/shm"), libc.shmget(0x5EED, 0, 0), "LEFT" in os.environ,
           hasattr(json, "LEFT"), hasattr(builtins, "LEFT"), hasattr(sys, "LEFT"),
           sorted(int(p) for p in os.listdir("/proc") if p.isdigit()) == [1, os.getpid()]])
    """


def test_a_run_sees_nothing_a_previous_run_left(
    sandbox: Sandbox, server: warm.WarmServer, processes_of: Callable[[int], list[int]]
) -> None:
    before = server.server_pid()
    left = run(sandbox, LEAVE)
    uid, made = left.stdout.split()
    assert left.ok and made == "True", left
    looked = run(sandbox, LOOK)
    # Only the run's runner (PID 1) and the program itself are in its PID namespace.
    assert ast.literal_eval(looked.stdout) == [[], [], -1, False, False, False, False, True]
    assert processes_of(int(uid)) == []  # the daemon died with its run's PID namespace
    assert server.server_pid() == before  # both runs came from the same warm server


def test_a_program_cannot_signal_or_ptrace_the_server_or_its_runner(
    sandbox: Sandbox, server: warm.WarmServer
) -> None:
    pid = server.server_pid()
    result = run(
        sandbox,
        f"""
        import ctypes, errno, os, signal
        libc = ctypes.CDLL(None, use_errno=True)
        for target in ({pid}, 1):  # the server's pid on the host, and the run's runner (PID 1)
            try:
                os.kill(target, signal.SIGKILL)
                print("killed")
            except OSError as e:
                print(errno.errorcode[e.errno])
            libc.ptrace(16, target, 0, 0)  # PTRACE_ATTACH
            print(errno.errorcode[ctypes.get_errno()])
        print(os.path.exists("/proc/{pid}/mem"), open("/proc/1/cmdline", "rb").read().split(b"\\0")[0].decode())
        """,
    )
    assert result.ok, result
    lines = result.stdout.splitlines()
    assert lines[:4] == ["ESRCH", "ESRCH", "EPERM", "EPERM"], lines
    assert lines[4].startswith("False verl-rewards-code run ")
    assert server.server_pid() == pid and server.alive()
    assert run(sandbox, "print('still serving')").stdout == "still serving\n"


def test_a_killed_server_is_rebuilt_and_the_runs_it_held_run_again(
    sandbox: Sandbox, server: warm.WarmServer, caplog: pytest.LogCaptureFixture
) -> None:
    old = server.server_pid()
    assert old is not None
    source = "import time\ntime.sleep(1.5)\nprint(input())"
    with caplog.at_level(logging.WARNING, logger="verl_rewards_code.sandbox"), ThreadPoolExecutor(2) as pool:
        held = [pool.submit(sandbox.run, source, name, LIMITS) for name in ("first\n", "second\n")]
        deadline = time.monotonic() + 30
        while len(Path(f"/proc/{old}/task/{old}/children").read_text().split()) < 2:
            assert time.monotonic() < deadline, "the runs never reached the server"
            time.sleep(0.02)
        os.kill(old, signal.SIGKILL)
        results = [future.result(timeout=60) for future in held]
    assert [(r.ok, r.stdout) for r in results] == [(True, "first\n"), (True, "second\n")], results
    assert server.alive() and server.server_pid() not in (None, old)
    assert "warm sandbox server died" in caplog.text


def test_runs_from_many_threads_share_the_server(sandbox: Sandbox, server: warm.WarmServer) -> None:
    words = [f"word{i}" for i in range(16)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda w: sandbox.run("print(input()[::-1])", w + "\n", LIMITS), words))
    assert [r.stdout for r in results] == [w[::-1] + "\n" for w in words]
    assert server.alive()


# Each runs in the forked interpreter and in a fresh one; the two must print the same.
FRESH_INTERPRETER = [
    "import sys\nprint(sys.argv == [__file__], __name__, __doc__, __spec__, type(__loader__).__name__, "
    "type(__builtins__).__name__, sys.flags.isolated, sys.flags.dont_write_bytecode, sys.flags.utf8_mode)",
    "import os, sys\nprint(sys.path, sorted(os.environ), os.getcwd() == os.environ['HOME'])",
    "import sys\nprint(sys.stdin.name, sys.stdin.encoding, sys.stdin.errors, sys.stdout.errors, sys.stderr.errors, "
    "sys.stdout.line_buffering, sys.stderr.line_buffering, sys.stdout is sys.__stdout__)",
    "print(input(), input())",
    "print('no newline', end='')",
    "raise SystemExit(3)",
    "import sys\nsys.exit('bye')",
    "def f():\n    raise ValueError('boom')\nf()",
    "print(1 +)",
    "import atexit, threading, time\natexit.register(print, 'at exit')\n"
    "threading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()\nprint('main done')",
    "import os\nos._exit(4)",
    # The forked interpreter's own exit must not depend on what the program rebinds.
    "import os, sys\nos._exit = sys.exit = lambda *args: None\nprint('rebound')",
]


def test_python_in_the_warm_interpreter_behaves_as_in_a_fresh_one(sandbox: Sandbox) -> None:
    def normalised(result: RunResult) -> tuple[str, str, int | None]:
        tree = re.compile(r"/[^'\" ]*verl-rewards-code-[0-9]+-[0-9]+-[a-z0-9_]+")
        return tree.sub("TREE", result.stdout), tree.sub("TREE", result.stderr), result.exit_code

    for source in FRESH_INTERPRETER:
        warm_run = sandbox.run(source, "a\nb\n", LIMITS)
        fresh_run = launch.execute(sandbox.isolation, source, "a\nb\n", LIMITS, sandbox.python)
        assert normalised(warm_run) == normalised(fresh_run), source


def test_the_user_namespace_sandbox_of_non_root_callers_is_warm_too(
    sandbox: Sandbox,
    user_namespace_isolation: Callable[[Isolation], Isolation],
    escape_attempts: Callable[[list[str]], str],
) -> None:
    # What a caller who is not root gets: a server in a user namespace.
    user_ns = user_namespace_isolation(sandbox.isolation)
    source = escape_attempts([]) + textwrap.dedent("""
        import os
        status = open("/proc/self/status").read()
        print([line.split()[1] for line in status.splitlines() if line.startswith(("CapEff", "CapPrm", "CapBnd"))])
        print(os.getuid(), sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
        """)
    user_sandbox = Sandbox(user_ns, sandbox.python)
    result = user_sandbox.run(source, "", LIMITS)
    assert warm.server_for(user_ns, sandbox.python) is not None
    assert result.ok, result.setup_error or result.stderr
    no_capabilities = str(["0000000000000000"] * 3)
    assert result.stdout.splitlines() == ["FileNotFoundError", "30", no_capabilities, "0 [1, 2]"]


def test_a_forked_worker_gets_a_server_of_its_own(sandbox: Sandbox, server: warm.WarmServer) -> None:
    parent_server = server.server_pid()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            result = sandbox.run("print('child')", "", LIMITS)
            mine = warm.server_for(sandbox.isolation, sandbox.python)
            os.write(write, f"{result.stdout.strip()} {mine is not None and mine.server_pid() != parent_server}".encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    assert os.read(read, 100).decode() == "child True"
    os.close(read)
    assert server.alive() and server.server_pid() == parent_server


# Sessions: the tests of one sample (one program, its stdin changing) in one sandbox (one
# runner), a fresh process, working directory, /dev/shm, IPC namespace and uid per test.

# One program: on stdin "leave" it leaves what it can behind, on "look" it looks for it.
LEAVE_OR_LOOK = """
    import ctypes, ctypes.util, os, socket, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    rt = ctypes.CDLL(ctypes.util.find_library("rt") or None, use_errno=True)
    if input() == "leave":
        open("left.txt", "w").write("x")
        open("/dev/shm/left", "w").write("x")
        segment = libc.shmget(0x5EED, 4096, 0o1000 | 0o666)
        queue = rt.mq_open(b"/left", os.O_CREAT | os.O_RDWR, 0o666, None)
        os.environ["LEFT"] = "x"
        sys.LEFT = "x"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind("\\0verl-rewards-left")
        listener.listen()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(60)  # a daemon holding the abstract socket, meant to outlive the test
            os._exit(0)
        os.wait()
        print(segment >= 0, queue >= 0)
    else:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect("\\0verl-rewards-left")
            reached = True
        except OSError:
            reached = False
        print([os.listdir("."), os.listdir("/dev/shm"), libc.shmget(0x5EED, 0, 0), rt.mq_open(b"/left", os.O_RDWR),
               "LEFT" in os.environ, hasattr(sys, "LEFT"), reached, sorted(int(p) for p in os.listdir("/proc")
               if p.isdigit()) == [1, os.getpid()]])
    print(os.getuid(), os.readlink("/proc/self/ns/ipc"), os.readlink("/proc/self/ns/mnt"))
    """


def test_a_test_sees_nothing_the_previous_test_of_its_sample_left(
    sandbox: Sandbox, processes_of: Callable[[int], list[int]]
) -> None:
    program = textwrap.dedent(LEAVE_OR_LOOK)
    with sandbox.session() as session:
        left = session.run(program, "leave\n", LIMITS)
        looked = session.run(program, "look\n", LIMITS)
    assert left.ok and looked.ok, (left, looked)
    made, left_facts = left.stdout.splitlines()
    seen, looked_facts = looked.stdout.splitlines()
    assert made == "True True", left
    # No file, shared memory segment, message queue, environment, module state, socket or process of the first test.
    assert ast.literal_eval(seen) == [[], [], -1, -1, False, False, False, True]
    uid, left_ipc, left_mnt = left_facts.split()
    looked_uid, looked_ipc, looked_mnt = looked_facts.split()
    assert looked_mnt == left_mnt  # the same sandbox (one runner for the sample)...
    assert looked_ipc != left_ipc and looked_uid != uid  # ...with a fresh IPC namespace and uid per test
    assert processes_of(int(uid)) == []  # the daemon was killed before the second test began


def test_a_session_holds_its_memory_budget_for_each_test(sandbox: Sandbox) -> None:
    # SysV shared memory one test leaves (never removed, as in test_sandbox_cgroups.py) is freed
    # before the next: each test gets the whole budget.
    # Two processes: each may map 120 MB, so a segment of 32 MB always attaches; 192 MB of segments
    # twice (left by one test and made by the next) would pass the budget of 256 MB.
    limits = Limits(timeout_s=20.0, memory_mb=256, max_output_bytes=64 * 1024, max_processes=2, disk_mb=16)
    hoard = textwrap.dedent("""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        held = 0
        for _ in range(6):
            sid = libc.shmget(0, ctypes.c_size_t(32 << 20), 0o1000 | 0o600)
            if sid < 0:
                break
            address = libc.shmat(sid, None, 0)
            if address in (None, ctypes.c_void_p(-1).value):
                break
            ctypes.memset(address, 1, 32 << 20)
            libc.shmdt(ctypes.c_void_p(address))
            held += 32
        print(held, os.getpid())
        """)
    with sandbox.session() as session:
        results = [session.run(hoard, "", limits) for _ in range(3)]
    assert [(r.ok, r.stdout.split()[:1], r.memory_limit_hit) for r in results] == [(True, ["192"], False)] * 3, results
    assert [r.stdout.split()[1] for r in results] != ["2", "2", "2"]  # one sandbox: its pids went on


# Prints its pid: the same in each fresh sandbox, more in a session's later tests.
BY_STDIN = """
    import os, sys, time
    mode = input()
    if mode == "sleep":
        time.sleep(30)
    elif mode == "flood":
        while True:
            print("x" * 1000)
    print(os.getpid())
    """


def test_a_test_that_does_not_end_well_ends_its_session(sandbox: Sandbox) -> None:
    fast = Limits(timeout_s=1.0, memory_mb=256, max_output_bytes=1024, max_processes=4, disk_mb=16)
    program = textwrap.dedent(BY_STDIN)
    with sandbox.session() as session:
        results = [session.run(program, f"{mode}\n", fast) for mode in ("run", "run", "sleep", "run", "flood", "run")]
    assert results[2].timed_out and results[4].output_limit_hit
    pids = [int(results[i].stdout) for i in (0, 1, 3, 5)]
    assert pids[1] > pids[0]  # the second test ran in the first one's sandbox
    assert pids[2:] == [pids[0]] * 2  # after a timeout, and after the output cap, a new sandbox


def test_a_session_is_left_at_a_change_of_program_or_limits(sandbox: Sandbox) -> None:
    program = textwrap.dedent(BY_STDIN)
    with sandbox.session() as session:
        pids = [session.run(program, "run\n", LIMITS).stdout, session.run(program, "run\n", LIMITS).stdout,
                session.run(program + "# another program\n", "run\n", LIMITS).stdout,
                session.run(program + "# another program\n", "run\n", replace(LIMITS, memory_mb=384)).stdout]
    first = int(pids[0])
    assert [int(pid) > first for pid in pids[1:]] == [True, False, False] and int(pids[2]) == first, pids


def test_a_session_program_cannot_signal_or_ptrace_its_runner(sandbox: Sandbox) -> None:
    attack = textwrap.dedent("""
        import ctypes, errno, os, signal
        libc = ctypes.CDLL(None, use_errno=True)
        try:
            os.kill(1, signal.SIGKILL)
            print("signalled")
        except OSError as e:
            print(errno.errorcode[e.errno])
        libc.ptrace(16, 1, 0, 0)
        print(errno.errorcode[ctypes.get_errno()], os.getpid())
        """)
    with sandbox.session() as session:
        results = [session.run(attack, "", LIMITS) for _ in range(3)]
    assert [r.stdout.split()[:2] for r in results] == [["EPERM", "EPERM"]] * 3, results
    assert [int(r.stdout.split()[2]) for r in results] == sorted({int(r.stdout.split()[2]) for r in results})


def test_nothing_of_a_session_outlives_it(sandbox: Sandbox, processes_of: Callable[[int], list[int]]) -> None:
    program = "import os, time\nif os.fork() == 0:\n    time.sleep(60)\nprint(os.getuid())\n"
    with sandbox.session() as session:
        results = [session.run(program, "", LIMITS) for _ in range(2)]
        # Each test's sleeping child was killed before the next test began.
        assert all(r.ok for r in results) and [processes_of(int(r.stdout)) for r in results] == [[], []]
    trees = [p.name for p in Path(tempfile.gettempdir()).glob(f"{launch.TREE_PREFIX}{owner_tag()}-*")]
    assert [name for name in trees if "-cache-" not in name and "-server-" not in name] == []
    if sandbox.isolation.cgroups is not None:
        prefix = f"{owner_tag()}-"
        assert [n for p in sandbox.isolation.cgroups.parents for n in os.listdir(p) if n.startswith(prefix)] == []


def test_a_session_whose_runner_died_between_tests_runs_the_next_in_a_new_sandbox(
    sandbox: Sandbox, server: warm.WarmServer
) -> None:
    program = textwrap.dedent(BY_STDIN)
    with sandbox.session() as session:
        first = session.run(program, "run\n", LIMITS)
        pid = server.server_pid()
        runners = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        assert len(runners) == 1  # the session's runner, waiting for its next test
        os.kill(int(runners[0]), signal.SIGKILL)
        deadline = time.monotonic() + 10
        while Path(f"/proc/{runners[0]}").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        second = session.run(program, "run\n", LIMITS)
    assert first.ok and second.ok and first.stdout == second.stdout, (first, second)  # a new sandbox: the same pid


def test_a_python_program_maps_no_more_than_the_warm_interpreter(sandbox: Sandbox, server: warm.WarmServer) -> None:
    # A forked program inherits its runner's mappings, which its address-space limit counts:
    # the runner must map nothing of its own (a thread's stack or malloc arena: 64 MB).
    size = "print(open('/proc/self/status').read().split('VmSize:')[1].split()[0])"
    with sandbox.session() as session:
        sizes = [int(session.run(size, "", LIMITS).stdout) for _ in range(2)]
    pid = server.server_pid()
    served = int(Path(f"/proc/{pid}/status").read_text().split("VmSize:")[1].split()[0])
    assert max(sizes) <= served + 4096, (sizes, served)  # kB
