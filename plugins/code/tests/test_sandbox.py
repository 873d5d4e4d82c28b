"""The sandbox against real faults: each must end as a failed run while the caller lives on."""

from __future__ import annotations

import ast
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from verl_rewards_code.sandbox import (
    Isolation,
    Limits,
    RunResult,
    Sandbox,
    SandboxUnavailable,
    isolation_for,
    launch,
    run_program,
)
from verl_rewards_code.sandbox import isolation as isolation_module

FAST = Limits(timeout_s=1.0, memory_mb=512, max_output_bytes=64 * 1024, max_processes=8, disk_mb=16)


@pytest.fixture(scope="module")
def chosen() -> Isolation:
    return isolation_for("auto", sys.executable)


@pytest.fixture
def namespaces(chosen: Isolation) -> Isolation:
    """The namespace sandbox: skipped where the system has none, required where it has unshare."""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        pytest.skip("no unshare on this system")
    assert chosen.level == "namespaces", f"unshare exists but the sandbox fell back: {chosen.describe()}"
    return chosen


def run(source: str, stdin: str = "", limits: Limits = FAST) -> RunResult:
    return run_program(textwrap.dedent(source), stdin, limits)


def run_uid(result: RunResult) -> int:
    """The uid a run printed on its first line (a fresh one per run, as root)."""
    return int(result.stdout.split()[0])


def test_a_program_reads_stdin_and_writes_stdout() -> None:
    result = run("print(input()[::-1])", "abc\n")
    assert result.ok and result.stdout == "cba\n"


def test_infinite_loop_is_stopped_by_the_cpu_limit() -> None:
    started = time.monotonic()
    result = run("while True:\n    pass")
    assert not result.ok
    assert result.timed_out or result.signal is not None
    assert time.monotonic() - started < 5.0


def test_sleeping_program_is_stopped_by_the_wall_clock() -> None:
    started = time.monotonic()
    result = run("import time\ntime.sleep(60)")
    assert result.timed_out and not result.ok
    assert time.monotonic() - started < 5.0


def test_memory_hog_hits_the_address_space_limit() -> None:
    result = run(
        """
        hog = []
        while True:
            hog.append(bytearray(10 * 1024 * 1024))
        """,
        limits=Limits(timeout_s=5.0, memory_mb=128, max_processes=1, disk_mb=16),
    )
    assert result.exit_code not in (0, None) and "MemoryError" in result.stderr
    assert result.max_rss_kb is not None and result.max_rss_kb < 128 * 1024


def test_huge_output_is_cut_at_the_file_size_limit() -> None:
    result = run("while True:\n    print('x' * 10000)")
    assert result.output_limit_hit and not result.ok
    assert len(result.stdout) <= FAST.max_output_bytes


def test_fork_bomb_is_contained_and_leaves_no_process_behind(
    namespaces: Isolation, processes_of: Callable[[int], list[int]]
) -> None:
    started = time.monotonic()
    result = run(
        """
        import os
        print(os.getuid(), flush=True)
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """
    )
    assert not result.ok
    assert time.monotonic() - started < 6.0
    if namespaces.fresh_uid:
        assert processes_of(run_uid(result)) == []
    assert subprocess.run(["true"], check=False).returncode == 0  # the caller can still fork


def test_process_limit_caps_the_number_of_processes(
    namespaces: Isolation, processes_of: Callable[[int], list[int]]
) -> None:
    result = run(
        """
        import os, time
        print(os.getuid())
        children = 0
        while children < 100:
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(10)
                os._exit(0)
            children += 1
        print(children)
        """
    )
    assert result.ok
    assert 0 < int(result.stdout.split()[1]) < FAST.max_processes
    if namespaces.fresh_uid:
        assert processes_of(run_uid(result)) == []


def test_writing_outside_the_working_directory_fails(namespaces: Isolation, tmp_path: Path) -> None:
    public = tmp_path / "public"
    public.mkdir()
    public.chmod(0o777)
    targets = [f"/tmp/verl-rewards-escape-{uuid.uuid4().hex}", str(public / "escape"), "../escape", "/escape"]
    result = run(
        f"""
        for path in {targets!r}:
            try:
                open(path, "w").write("x")
                print("wrote", path)
            except OSError as e:
                print("refused", e.errno)
        open("inside.txt", "w").write("ok")
        print(open("inside.txt").read())
        """
    )
    try:
        assert result.ok, result.stderr
        assert "wrote" not in result.stdout
        assert result.stdout.count("refused") == len(targets) and result.stdout.endswith("ok\n")
        assert not any(os.path.exists(t) for t in targets[:2])
    finally:
        for target in targets[:2]:
            if os.path.exists(target):
                os.remove(target)


def test_network_is_unreachable(namespaces: Isolation) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        result = run(
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')"
        )
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()
    assert not result.ok and "connected" not in result.stdout
    assert "OSError" in result.stderr or "ConnectionRefusedError" in result.stderr


def test_a_program_cannot_kill_its_caller(chosen: Isolation) -> None:
    if not (chosen.pid_namespace or chosen.fresh_uid):
        # The program would run as this process's own uid, and the kill would end pytest.
        pytest.skip(f"the sandbox does not separate the program from its caller: {chosen.describe()}")
    result = run(f"import os, signal\nos.kill({os.getpid()}, signal.SIGKILL)\nprint('sent')")
    assert not result.ok and "sent" not in result.stdout


def test_environment_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERL_REWARDS_TEST_SECRET", "s3cret")
    result = run("import os\nprint(sorted(os.environ))\nprint(os.environ['HOME'] == os.getcwd())")
    assert result.ok and "VERL_REWARDS_TEST_SECRET" not in result.stdout
    assert result.stdout.endswith("True\n")


def test_each_run_gets_a_fresh_empty_working_directory() -> None:
    first = run("import os\nopen('left.txt', 'w').write('x')\nprint(os.getcwd())")
    second = run("import os\nprint(os.getcwd())\nprint(os.listdir('.'))")
    assert first.ok and second.ok
    assert first.stdout.splitlines()[0] != second.stdout.splitlines()[0]
    assert second.stdout.splitlines()[1] == "[]"


def test_the_run_tree_is_removed_even_from_a_private_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    result = run("import os\nos.makedirs('a/b')\nos.chmod('a', 0o500)\nprint('made')")
    assert result.ok, result.setup_error or result.stderr
    assert list(private.iterdir()) == []


def test_rlimits_mode_still_bounds_time_memory_and_output() -> None:
    loop = run_program("while True:\n    pass", "", FAST, isolation="rlimits")
    hog = run_program("x = bytearray(1024 ** 3)", "", FAST, isolation="rlimits")
    spew = run_program("while True:\n    print('x' * 10000)", "", FAST, isolation="rlimits")
    assert loop.timed_out or loop.signal is not None
    assert "MemoryError" in hog.stderr
    assert spew.output_limit_hit


def test_falling_back_logs_a_warning_naming_what_is_lost(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(isolation_module, "namespaces_isolation", lambda python: None)
    with caplog.at_level(logging.WARNING, logger="verl_rewards_code.sandbox"):
        chosen = isolation_module._choose("auto", sys.executable)
    assert chosen.level == "rlimits"
    [record] = caplog.records
    assert "falls back" in record.getMessage() and "no `unshare`" in record.getMessage()
    assert "NOT isolated: network" in record.getMessage()


@pytest.mark.parametrize(
    ("isolation", "separated"),
    [
        (Isolation("rlimits"), False),
        (Isolation("rlimits", fresh_uid=False, nproc_enforced=False), False),
        (Isolation("rlimits", fresh_uid=True), True),
        (Isolation("namespaces", ("unshare", "--user", "--mount", "--pid"), drop_caps=True, mount=True), True),
    ],
)
def test_describe_says_when_the_program_runs_as_the_caller(isolation: Isolation, separated: bool) -> None:
    text = isolation.describe()
    who = "root" if os.geteuid() == 0 else "the caller's uid"
    assert (f"user (the program runs as {who}" in text) is not separated, text
    if not separated:
        assert "NOT isolated:" in text


def test_requiring_namespaces_where_there_are_none_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(isolation_module, "namespaces_isolation", lambda python: None)
    with pytest.raises(SandboxUnavailable, match="namespace isolation is unavailable"):
        isolation_module._choose("namespaces", sys.executable)


def test_unknown_isolation_mode_is_an_error() -> None:
    with pytest.raises(ValueError, match="isolation must be one of"):
        isolation_for("docker", sys.executable)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["timeout_s", "memory_mb", "max_output_bytes", "max_processes"])
def test_limits_must_be_positive(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Limits(**{field: 0})


def test_a_broken_sandbox_is_a_setup_error_not_a_program_failure() -> None:
    broken = Isolation("namespaces", command=("/bin/false",))
    result = launch.execute(broken, "print('never')", "", FAST, sys.executable)
    assert result.setup_error is not None and "exited with 1" in result.setup_error
    assert isolation_module.probe(broken, sys.executable) == result.setup_error


# Row 16 of issue 15: the program sees no host files beyond the interpreter.

DATASET = Path(__file__).with_name("data") / "apps_rows.jsonl"


def test_a_program_cannot_read_a_dataset_beside_the_tests_or_in_tmp(namespaces: Isolation, tmp_path: Path) -> None:
    copy = tmp_path / "dataset.jsonl"
    copy.write_text(DATASET.read_text())
    copy.chmod(0o644)
    tmp_path.chmod(0o755)
    probe = f"""
        for path in {[str(DATASET), str(copy)]!r}:
            try:
                print(open(path).read()[:20])
            except OSError as e:
                print(type(e).__name__)
        """
    started = time.monotonic()
    result = run(probe)
    assert result.ok, result.stderr
    assert result.stdout == "FileNotFoundError\nFileNotFoundError\n"
    assert time.monotonic() - started < 5.0
    # The same files are world-readable where the sandbox has no root of its own.
    weak = run_program(textwrap.dedent(probe), "", FAST, isolation="rlimits")
    assert weak.stdout.count('{"data_source"') == 2


def _interpreter_roots_under(tmp: str) -> set[str]:
    """The names directly under ``tmp`` on the way to this interpreter's prefixes."""
    names = set()
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.realpath(sys.executable)}:
        relative = os.path.relpath(os.path.realpath(prefix), os.path.realpath(tmp))
        if not relative.startswith(".."):
            names.add(relative.split(os.sep)[0])
    return names


def test_a_program_cannot_list_other_runs_or_ray_logs(namespaces: Isolation) -> None:
    other: dict[str, RunResult] = {}
    sleeper = threading.Thread(target=lambda: other.update(r=run("import time\ntime.sleep(3)", limits=SLOW)))
    sleeper.start()
    try:
        tmp = tempfile.gettempdir()
        deadline = time.monotonic() + 5
        while not (others := list(Path(tmp).glob("verl-rewards-code-*/io/main.py"))):
            assert time.monotonic() < deadline, "the other run never started"
            time.sleep(0.05)
        targets = [tmp, "/tmp/ray", *map(str, others)]
        result = run(
            f"""
            import os
            print(os.listdir({tmp!r}))
            for path in {targets[1:]!r}:
                try:
                    print(os.listdir(path) if os.path.isdir(path) else open(path).read())
                except OSError as e:
                    print(type(e).__name__)
            """
        )
    finally:
        sleeper.join(timeout=30)
    assert result.ok, result.stderr
    own, *rest = result.stdout.splitlines()
    listed = ast.literal_eval(own)
    # Only this run's own (nearly empty) tree, and the way to the interpreter when
    # it is installed under the temporary directory (a venv in a checkout there).
    runs = [name for name in listed if name.startswith("verl-rewards-code-")]
    assert len(runs) == 1 and runs[0] not in {p.parts[-3] for p in others}
    assert set(listed) - set(runs) <= _interpreter_roots_under(tmp)
    assert rest == ["FileNotFoundError"] * (len(targets) - 1)
    if os.path.isdir("/tmp/ray"):
        assert os.listdir("/tmp/ray")  # what the program would have seen
    assert other["r"].ok


# Row 17 of issue 15: memory, processes and disk are bounded for the whole run.

SLOW = Limits(timeout_s=8.0, memory_mb=512, max_output_bytes=64 * 1024, max_processes=4, disk_mb=32)

HOARDERS = """
    import os, sys, time
    read, write = os.pipe()
    children = 0
    for _ in range(8):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            break
        children += 1
    chunks = []
    try:
        while True:
            chunk = bytearray(8 * 1024 * 1024)
            chunk[::4096] = b"x" * len(chunk[::4096])  # touch every page: real memory
            chunks.append(chunk)
    except MemoryError:
        pass
    os.write(write, f"{len(chunks) * 8}\\n".encode())
    if pid == 0:
        time.sleep(2)  # hold it while the others allocate
        os._exit(0)
    for _ in range(children):
        os.wait()
    os.close(write)
    reports = os.read(read, 4096).decode().split()
    print(len(reports), sum(map(int, reports)))
    """


def test_processes_together_stay_within_the_memory_budget(namespaces: Isolation) -> None:
    started = time.monotonic()
    result = run(HOARDERS, limits=SLOW)
    assert result.ok, result.stderr
    processes, total_mb = map(int, result.stdout.split())
    assert processes == SLOW.max_processes  # the fork past the cap failed
    assert 0 < total_mb <= SLOW.memory_mb - SLOW.disk_mb
    assert time.monotonic() - started < SLOW.timeout_s + 2


def test_the_working_directory_and_shm_share_one_disk_budget(namespaces: Isolation) -> None:
    disk = Limits(timeout_s=5.0, memory_mb=512, max_output_bytes=1024 * 1024, disk_mb=16)
    result = run(
        """
        import errno
        written = 0
        for i in range(200):
            for path in (f"file{i}", f"/dev/shm/seg{i}"):
                try:
                    with open(path, "wb") as f:
                        f.write(b"x" * (512 * 1024))
                    written += 512 * 1024
                except OSError as e:
                    assert e.errno == errno.ENOSPC, e
                    print(written // 1024 // 1024)
                    raise SystemExit(0)
        print("unbounded")
        """,
        limits=disk,
    )
    assert result.ok, result.stderr
    assert disk.disk_mb - 2 <= int(result.stdout) <= disk.disk_mb


def test_default_limits_keep_a_run_within_its_memory_budget() -> None:
    limits = Limits()
    assert limits.max_processes * limits.process_memory_mb + limits.disk_mb <= limits.memory_mb == 1024
    assert dict((name, soft) for name, soft, _ in limits.rlimits())["RLIMIT_AS"] == limits.process_memory_mb * 1024**2


def test_limits_that_leave_too_little_memory_per_process_are_an_error() -> None:
    with pytest.raises(ValueError, match="leaves 16 MB per process"):
        Limits(memory_mb=128, disk_mb=64, max_processes=4)


def test_the_user_namespace_sandbox_of_non_root_callers_builds_the_same_minimal_root(
    namespaces: Isolation,
    user_namespace_isolation: Callable[[Isolation], Isolation],
    escape_attempts: Callable[[list[str]], str],
) -> None:
    user_ns = user_namespace_isolation(namespaces)
    source = escape_attempts(["/tmp/ray", "/root/.bash_history"]) + textwrap.dedent("""
        import os
        open("inside.txt", "w").write("ok")
        print(len(os.listdir(os.path.dirname(os.getcwd()))), open("inside.txt").read())
        """)
    result = launch.execute(user_ns, source, "", FAST, sys.executable)
    assert result.ok, result.setup_error or result.stderr
    assert result.stdout.splitlines() == ["FileNotFoundError"] * 3 + ["30", "2 ok"]


STREAMS_BY_NAME = """
    import os, stat, sys
    data = open("/dev/stdin").read()
    with open("/dev/stdout", "w") as out:
        out.write(data.upper())
    with open("/dev/stderr", "w") as err:
        err.write("to stderr\\n")
    print(sorted(os.listdir("/dev/fd")), flush=True)
    print([os.readlink(f"/dev/{name}") for name in ("fd", "stdin", "stdout", "stderr")], flush=True)
    print([stat.S_ISFIFO(os.stat(f"/dev/fd/{fd}").st_mode) for fd in (0, 1, 2)], flush=True)
    for path in ("/dev/fd/3", "/dev/fd/5", "/proc/1/fd/0"):
        try:
            open(path, "rb")
            print("opened", path)
        except OSError as e:
            print(type(e).__name__)
    """


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_the_standard_streams_by_name_are_the_programs_own(namespaces: Isolation, warm: bool) -> None:
    # Issue 33 item 4: the sandbox's root had no /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd.
    result = Sandbox(namespaces, sys.executable, warm=warm).run(textwrap.dedent(STREAMS_BY_NAME), "abc\n", FAST)
    assert result.ok, result
    assert result.stderr == "to stderr\n"
    assert result.stdout.splitlines() == [
        "ABC",
        "['0', '1', '2', '3']",  # 3: the listing's own descriptor
        "['/proc/self/fd', '/proc/self/fd/0', '/proc/self/fd/1', '/proc/self/fd/2']",
        "[True, True, True]",  # the run's pipes
        "FileNotFoundError",  # the directory listed above is closed
        "FileNotFoundError",
        "PermissionError",  # the runner's (PID 1) descriptors are not the program's
    ]
