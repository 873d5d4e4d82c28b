"""Fixtures shared by the code plugin's tests."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from verl_rewards_code.sandbox import Isolation
from verl_rewards_code.sandbox import isolation as isolation_module


def _processes_of(uid: int) -> list[int]:
    """Pids of live processes running as ``uid``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():  # /proc/self and /proc/thread-self are the caller
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        uid_line = next((line for line in status.splitlines() if line.startswith("Uid:")), "")
        if uid_line and int(uid_line.split()[1]) == uid:
            pids.append(int(entry.name))
    return pids


@pytest.fixture(scope="session")
def processes_of() -> Callable[[int], list[int]]:
    """``processes_of(uid)``: pids of live processes running as ``uid`` (a run's fresh uid:
    none may outlive the run)."""
    return _processes_of


def _user_namespace_isolation(base: Isolation) -> Isolation:
    unshare = shutil.which("unshare") or "unshare"
    return Isolation("namespaces", (unshare, "--user", "--map-root-user", *isolation_module._NAMESPACES),
                     drop_caps=True, mount=True, binds=base.binds, seccomp=base.seccomp)


@pytest.fixture(scope="session")
def user_namespace_isolation() -> Callable[[Isolation], Isolation]:
    """``user_namespace_isolation(base)``: the namespace sandbox a caller who is not root gets
    (a user namespace, no capabilities) with ``base``'s binds and seccomp filter. Root can
    build it too, so it runs here either way."""
    return _user_namespace_isolation


def _escape_attempts(paths: list[str]) -> str:
    return textwrap.dedent(f"""
        for path in {paths!r}:
            try:
                open(path).read()
                print("read", path)
            except OSError as e:
                print(type(e).__name__)
        try:
            open("/usr/escape", "w")
        except OSError as e:
            print(e.errno)
        """)


@pytest.fixture
def escape_attempts(tmp_path: Path) -> Callable[[list[str]], str]:
    """``escape_attempts(paths)``: the source of a program that tries to read a dataset file of
    the host (in ``tmp_path``), then each of ``paths`` (printing ``read <path>`` or the error's
    type), then to write /usr/escape (printing the errno)."""
    secret = tmp_path / "dataset.jsonl"
    secret.write_text("expected outputs\n")
    return lambda paths: _escape_attempts([str(secret), *paths])


# Programs whose ``add`` returns an object that claims to equal whatever it is compared
# with, or changes what the comparison uses: under the assert harness and the call
# harness alike, none may pass a test.
EQUALITY_FORGERIES = {
    "always-equal object": """
        class Anything:
            def __eq__(self, other):
                return True
            __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__
            def __hash__(self):
                return 0
        def add(a, b):
            return Anything()
        """,
    "int subclass": """
        class Int(int):
            def __eq__(self, other):
                return True
        def add(a, b):
            return Int(0)
        """,
    "always-equal list subclass inside": """
        class L(list):
            def __eq__(self, other):
                return True
        def add(a, b):
            return [L()]
        """,
    "plain list subclass inside": """
        class Box(list):
            pass
        def add(a, b):
            return [Box()] if a else 0
        """,
    "patches type() mid-comparison": """
        import builtins
        class Anything:
            def __eq__(self, other):
                return True
        def add(a, b):
            builtins.type = lambda x: int
            builtins.isinstance = lambda *x: True
            return Anything()
        """,
}


@pytest.fixture(params=list(EQUALITY_FORGERIES.values()), ids=list(EQUALITY_FORGERIES))
def equality_forgery(request: pytest.FixtureRequest) -> str:
    """Each program of ``EQUALITY_FORGERIES`` (indented, as in a test module: dedent it)."""
    return str(request.param)
