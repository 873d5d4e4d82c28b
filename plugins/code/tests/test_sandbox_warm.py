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
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from verl_rewards_code.sandbox import Isolation, Limits, RunResult, Sandbox, launch, warm

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
