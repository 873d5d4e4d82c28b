"""The compile cache: bounded in bytes on the host's disk, each output within the compile's disk limit,
written as it arrives (never held whole in the scorer's memory).

The real fault (issue 32 item 4): ``char big[60000000] = {1};`` compiles in about
a second to a 57 MB binary, left in the host's temporary directory; the cache
kept 256 entries whatever their size (one worker could hold about 15 GB).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

from verl_rewards_code.sandbox import Limits, Sandbox, isolation_for
from verl_rewards_code.sandbox.compiled import CACHE, MAX_BYTES

MIB = 1024 * 1024


def big_program(megabytes: int) -> str:
    """A C++ program whose binary holds an initialised array of ``megabytes`` MB (unique per call)."""
    return f"char big[{megabytes * 1_000_000}] = {{1}};\nint main() {{ return big[0] - 1; }}\n// {uuid.uuid4().hex}\n"


def disk_usage(directory: str) -> int:
    total = 0
    for parent, _dirs, files in os.walk(directory):
        total += sum(os.lstat(os.path.join(parent, name)).st_blocks * 512 for name in files)
    return total


def test_the_compile_cache_holds_at_most_max_bytes_on_disk() -> None:
    sandbox = Sandbox.resolve().for_language("cpp")
    for _ in range(5):  # 5 x 60 MB (each file is under the compile's 64 MB file size limit)
        assert sandbox.compile(big_program(60)) is None
        assert disk_usage(CACHE.root()) <= MAX_BYTES
    assert CACHE.bytes <= MAX_BYTES == 256 * MIB  # as plugins/code/README.md says
    assert sandbox.run(big_program(1), "").ok  # a program still compiles and runs after evictions


def test_a_compiled_program_never_passes_through_the_scorers_memory_whole() -> None:
    # Before, the launcher collected the whole output in a bytearray before writing it out.
    # The peak resident set (VmHWM), reset to the current one (clear_refs 5) just before
    # the compile; ru_maxrss would carry the pre-exec peak of this forked test process.
    script = textwrap.dedent(f"""
        import json
        from verl_rewards_code.sandbox import Sandbox
        def kb(field):
            status = open("/proc/self/status").read()
            return int(status.split(field + ":")[1].split()[0])
        sandbox = Sandbox.resolve().for_language("cpp")
        assert sandbox.compile({big_program(1)!r}) is None  # the warm server, the toolchain: started
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = kb("VmRSS")
        assert sandbox.compile({big_program(60)!r}) is None
        print(json.dumps(kb("VmHWM") - before))
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    grew_kb = json.loads(done.stdout)
    assert grew_kb < 16 * 1024, f"the scorer's peak memory grew by {grew_kb} KB compiling a 60 MB binary"


def test_a_compile_output_past_the_compile_disk_limit_is_a_compile_error() -> None:
    # Without a mount namespace the compiler writes on the host's disk, where only
    # the file size limit (64 MB) held; its output now counts against disk_mb.
    limits = Limits(timeout_s=60.0, memory_mb=2048, max_output_bytes=64 * MIB, max_processes=8, disk_mb=32)
    sandbox = Sandbox(isolation_for("rlimits", sys.executable), sys.executable).for_language("cpp", limits)
    error = sandbox.compile(big_program(40))
    assert error is not None and "passes its disk limit (33554432 bytes)" in error, error
    assert sandbox.compile(big_program(20)) is None


def test_a_failed_compile_leaves_nothing_in_the_cache_directory() -> None:
    sandbox = Sandbox.resolve().for_language("cpp")
    assert sandbox.compile(f"int main() {{ return undeclared; }} // {uuid.uuid4().hex}\n") is not None
    assert [p.name for p in Path(CACHE.root()).iterdir() if p.name.startswith("compiling-")] == []
