"""In-sandbox runner of a problem's checker: compile it (C++), or run it on one test.

This file is the sandboxed ``main.py`` of a checker run (standard library
only; it never imports the package). Stdin holds one JSON object:

* ``{"compile": SOURCE}``: compile C++ ``SOURCE`` with the machine's ``g++``
  (C++17, -O2) and write the executable, base64, on stdout; a compile error
  exits 1 with the compiler's messages on stderr.
* ``{"files": {"input.txt": ..., "output.txt": ..., "answer.txt": ...},
  "python": SOURCE}`` or ``..., "executable": BASE64}``: write the three files
  into the working directory and run the checker as testlib's checkers run,
  ``checker input.txt output.txt answer.txt``, with stdin from ``/dev/null``;
  its exit status, stdout and stderr are this run's. A Python checker that
  raises exits 3 (testlib's "checker failed").
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import traceback
from typing import Any

ARGV = ("input.txt", "output.txt", "answer.txt")
_CHECKER_FAILED = 3
_COMPILE_TIMEOUT_S = 60


def _compile(source: str) -> None:
    with open("checker.cpp", "w", encoding="utf-8") as f:
        f.write(source)
    command = ["g++", "-std=c++17", "-O2", "-pipe", "-s", "-o", "checker", "checker.cpp"]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=_COMPILE_TIMEOUT_S)
    except FileNotFoundError:
        sys.stderr.write("g++ is not installed on this machine (C++ checkers are compiled with g++)\n")
        sys.exit(2)
    if done.returncode != 0:
        sys.stderr.write(done.stderr.decode("utf-8", "replace")[-3000:])
        sys.exit(1)
    with open("checker", "rb") as f:
        sys.stdout.write(base64.b64encode(f.read()).decode("ascii"))


def _write_files(files: dict[str, str]) -> None:
    for name in ARGV:
        with open(name, "w", encoding="utf-8", newline="") as f:
            f.write(files[name])


def _run_executable(executable: str) -> None:
    with open("checker", "wb") as f:
        f.write(base64.b64decode(executable))
    os.chmod("checker", 0o700)
    os.execv("./checker", ["checker", *ARGV])


def _run_python(source: str) -> None:
    sys.argv = ["checker.py", *ARGV]
    code = 0
    try:
        exec(compile(source, "checker.py", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            print(e.code, file=sys.stderr)
    except BaseException as e:  # noqa: BLE001 (the checker's own failure, reported as such)
        traceback.print_exception(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None)
        code = _CHECKER_FAILED
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main() -> None:
    """Compile the checker, or run it on the test in stdin's files."""
    request: dict[str, Any] = json.loads(sys.stdin.read())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    if "compile" in request:
        _compile(request["compile"])
        return
    _write_files(request["files"])
    if "executable" in request:
        _run_executable(request["executable"])
    _run_python(request["python"])


if __name__ == "__main__":
    main()
