"""The languages the sandbox runs: how each is compiled and started, and what its toolchain needs.

Every language runs inside the same sandbox (namespaces, minimal root,
cgroup, seccomp, rlimits, capped pipes); a language only adds the host paths
its toolchain needs (read-only), the threads its runtime starts for itself,
and how it reports running out of memory. Compilation is a run of its own, in
the sandbox, with the compile limits; its output directory is taken out of
the sandbox and cached (``compiled.py``).

| language     | compiled with                               | run as                     |
|--------------|---------------------------------------------|----------------------------|
| `python`     | -                                           | the warm interpreter (or `python -I -B -X utf8 main.py`) |
| `cpp`        | `g++ -std=c++17 -O2 -pipe`                  | the binary                 |
| `rust`       | `rustc -O --edition 2021 -C codegen-units=1` | the binary                 |
| `java`       | `javac -encoding UTF-8`                     | `java` with `JAVA_RUN_FLAGS`, `-Xmx` from `memory_mb` |
| `javascript` | -                                           | `node --max-old-space-size=... --require <blocking stdio> main.js` |
| `c`          | `gcc -std=c17 -O2 -pipe ... -lm`            | the binary                 |
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from .java import java_classes
from .records import MIB, Job, Limits

LANGUAGES = ("python", "cpp", "java", "javascript", "rust", "c")
# Fence tags (lower case) and the language each names.
TAGS: Mapping[str, str] = {
    **dict.fromkeys(("python", "py", "python3", "py3"), "python"),
    "c": "c",
    **dict.fromkeys(("cpp", "c++"), "cpp"),
    "java": "java",
    **dict.fromkeys(("javascript", "js"), "javascript"),
    **dict.fromkeys(("rust", "rs"), "rust"),
}
COMPILED = ("c", "cpp", "java", "rust")
# Compiled to a native binary, run as it is.
NATIVE = ("c", "cpp", "rust")

# The JVM: one serial GC thread, the client compiler only (a quick start for
# short programs), no shared perf file, and small reservations for code and
# classes; -Xmx and -Xss are added per run.
JAVA_RUN_FLAGS = (
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Xshare:auto",
    "-XX:ReservedCodeCacheSize=64m",
    "-XX:CompressedClassSpaceSize=64m",
    "-XX:MaxMetaspaceSize=192m",
)
JAVA_STACK = "-Xss64m"
# What a JVM, node or rustc needs of address space beyond the heap it may use,
# where no memory cgroup bounds the run (measured: java -Xmx128m with the flags
# above starts under 2 GB, node under 1 GB).
_RUNTIME_RESERVE_MB = {"java": 2048, "javascript": 1024}
# node makes its stdout and stderr pipes non-blocking and queues what a full pipe
# does not take; process.exit() drops the queue (nodejs/node#6456: 1.2 MB written,
# 64-128 KB kept). Preloaded before the program, this makes both blocking, as they
# are when they are files: everything written before the exit reaches the pipe.
NODE_PRELOAD = (".stdio-blocking.js", """\
for (const stream of [process.stdout, process.stderr]) {
  if (stream._handle && typeof stream._handle.setBlocking === "function") stream._handle.setBlocking(true);
}
""")
# Threads a runtime starts for itself, on top of max_processes (measured: a JVM
# with the flags above has 13-14, node with one V8 worker 4).
_RUN_TASKS = {"java": 20, "javascript": 8}
_COMPILE_TASKS = 32
# How each runtime reports that it ran out of its memory.
OUT_OF_MEMORY = {
    "python": ("MemoryError",),
    # C has no runtime to say it: a program that reports malloc's ENOMEM with perror() does.
    "c": ("Cannot allocate memory",),
    "cpp": ("std::bad_alloc",),
    "rust": ("memory allocation of",),
    "java": ("java.lang.OutOfMemoryError",),
    "javascript": ("JavaScript heap out of memory", "Fatal process out of memory", "Array buffer allocation failed"),
}
# Compilers read the source by a path relative to the working directory (a
# sibling of io/), so their messages do not name the run's tree; it is
# removed from the messages (``compiled.compile_failure``).
SOURCE_DIR = "../io/"


class ToolchainMissing(RuntimeError):
    """A language's compiler or runtime is not installed on this machine."""


@dataclass(frozen=True)
class Toolchain:
    """A language's tools on this machine: real paths (the sandbox shows no
    ``/etc/alternatives``), the host paths they need, and what identifies them."""

    language: str
    tools: Mapping[str, str]
    binds: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def identity(self) -> str:
        """Part of a compiled program's cache key: the tools, their sizes and times."""
        parts = []
        for path in sorted(self.tools.values()):
            info = os.stat(path)
            parts.append(f"{path}:{info.st_size}:{info.st_mtime_ns}")
        return "|".join(parts)


def language_of(tag: str) -> str | None:
    """The language a fence tag (any case) names, or None."""
    return TAGS.get(tag.strip().lower())


def available() -> dict[str, str]:
    """Each language and what runs it here (``"missing: g++"`` when its tools are not on PATH).
    Cheap: it looks the tools up, it starts none of them."""
    found = {}
    for language in LANGUAGES:
        names = _TOOL_NAMES[language]
        paths = [shutil.which(name) for name in names]
        missing = [name for name, path in zip(names, paths) if path is None]
        found[language] = f"missing: {', '.join(missing)}" if missing else ", ".join(p for p in paths if p)
    found["python"] = "the scoring interpreter (or the python kwarg)"
    return found


_TOOL_NAMES = {
    "python": (),
    "cpp": ("g++",),
    "java": ("javac", "java"),
    "javascript": ("node",),
    "rust": ("rustc", "cc"),
    "c": ("gcc",),
}


@functools.cache
def toolchain(language: str) -> Toolchain:
    """The tools of ``language`` on this machine (found once per process)."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; the sandbox runs {', '.join(LANGUAGES)}")
    tools, found = {}, {}
    for name in _TOOL_NAMES[language]:
        path = shutil.which(name)
        if path is None:
            runnable = [lang for lang, how in available().items() if not how.startswith("missing")]
            raise ToolchainMissing(
                f"{language} programs need `{name}`, which is not installed on this machine "
                f"(not on PATH={os.environ.get('PATH', '')}); install it, or use a language this "
                f"machine runs: {', '.join(runnable)}"
            )
        found[name], tools[name] = path, os.path.realpath(path)
    if language == "java":
        return _java(tools)
    if language == "rust":
        return _rust(found["rustc"], tools)
    return Toolchain(language, tools, binds=tuple(sorted({_prefix(p) for p in tools.values()} - {"/usr"})))


def _prefix(path: str) -> str:
    """The installation a tool belongs to: the parent of its ``bin`` directory."""
    return os.path.dirname(os.path.dirname(path))


def _java(tools: dict[str, str]) -> Toolchain:
    home = _prefix(tools["java"])
    binds = {home, _prefix(tools["javac"])}
    # Debian's JDK links its configuration into /etc/java-<n>-openjdk.
    for sub in ("conf", "lib/security", "lib"):
        directory = os.path.join(home, sub)
        for entry in os.listdir(directory) if os.path.isdir(directory) else ():
            target = os.path.join(directory, entry)
            if os.path.islink(target):
                real = os.path.realpath(target)
                if not real.startswith(home + "/") and os.path.exists(real):
                    binds.add(os.path.dirname(real))
    return Toolchain("java", tools, tuple(sorted(_outermost(binds - {"/usr"}))), {"MALLOC_ARENA_MAX": "2"})


def _rust(rustc: str, tools: dict[str, str]) -> Toolchain:
    # rustup's rustc is a proxy (a link to rustup, which reads RUSTUP_HOME); the
    # real compiler is in the toolchain's sysroot.
    try:
        sysroot = subprocess.run(
            [rustc, "--print", "sysroot"], capture_output=True, text=True, timeout=60, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        raise ToolchainMissing(f"rust programs need a working `rustc` ({rustc}: {e})") from e
    real = {"rustc": os.path.join(sysroot, "bin", "rustc"), "cc": tools["cc"]}
    return Toolchain("rust", real, tuple(sorted(_outermost({sysroot} - {"/usr"}))))


def _outermost(paths: set[str]) -> list[str]:
    kept: list[str] = []
    for path in sorted(paths, key=len):
        if not any(path == k or path.startswith(k + "/") for k in kept):
            kept.append(path)
    return kept


def source_name(language: str, source: str) -> str:
    """The file name the program's source needs (Java: its public class's)."""
    if language == "java":
        return f"{java_classes(source)[0]}.java"
    return {"python": "main.py", "c": "main.c", "cpp": "main.cpp", "javascript": "main.js", "rust": "main.rs"}[language]


def extra_info(language: str, source: str) -> dict[str, str]:
    """What a sample's extra info says of how its program ran: for Java whose source
    declares several top-level types, ``main_class``, the one ``java`` ran."""
    if language != "java":
        return {}
    classes = java_classes(source)
    return {"main_class": classes.main} if classes.types > 1 else {}


def compile_job(language: str, source: str, limits: Limits, into: str, cgroups: bool) -> Job:
    """The run that compiles ``source`` into ``out/`` (sent out into ``into``)."""
    chain = toolchain(language)
    name = source_name(language, source)
    tool = chain.tools
    command: tuple[str, ...]
    if language == "c":
        command = (tool["gcc"], "-std=c17", "-O2", "-pipe", "-o", "out/main", SOURCE_DIR + name, "-lm")
    elif language == "cpp":
        command = (tool["g++"], "-std=c++17", "-O2", "-pipe", "-o", "out/main", SOURCE_DIR + name)
    elif language == "rust":
        command = (
            tool["rustc"], "-O", "--edition", "2021", "-C", "codegen-units=1", "-C", "debuginfo=0",
            "-C", f"linker={tool['cc']}", "-o", "out/main", SOURCE_DIR + name,
        )
    elif language == "java":
        heap = max(64, (limits.memory_mb - limits.disk_mb) // 2)
        command = (
            tool["javac"], f"-J-Xmx{heap}m", *(f"-J{flag}" for flag in JAVA_RUN_FLAGS),
            "-encoding", "UTF-8", "-d", "out", SOURCE_DIR + name,
        )
    else:
        raise ValueError(f"{language} is not compiled")
    return Job(
        {name: source},
        command,
        collect="out",
        collect_into=into,
        artifact_bytes=limits.disk_mb * MIB,  # what it writes to the host's disk counts against its disk limit
        binds=chain.binds,
        env=dict(chain.env),
        extra_tasks=_COMPILE_TASKS,
        address_space_mb=0 if cgroups else limits.memory_mb - limits.disk_mb,
        merge_stderr=True,
    )


def run_job(language: str, source: str, build: str | None, limits: Limits, cgroups: bool) -> Job:
    """The run of a program in ``language``: ``build`` is its compiled output (cached)."""
    if language == "python":
        return Job.python(source)
    chain = toolchain(language)
    name = source_name(language, source)
    budget = limits.memory_mb - limits.disk_mb
    command: tuple[str, ...]
    if language in NATIVE:
        command = ("{build}/main",)
    elif language == "java":
        heap = max(32, budget - 96)
        main_class = java_classes(source)[1]
        command = (chain.tools["java"], f"-Xmx{heap}m", JAVA_STACK, *JAVA_RUN_FLAGS, "-cp", "{build}", main_class)
    else:
        command = (
            chain.tools["node"], "--v8-pool-size=1", f"--max-old-space-size={max(32, budget - 64)}",
            "--require", "{io}/" + NODE_PRELOAD[0], "{io}/" + name,
        )
    files = {} if language in COMPILED else {name: source}
    if language == "javascript":
        files[NODE_PRELOAD[0]] = NODE_PRELOAD[1]
    reserve = _RUNTIME_RESERVE_MB.get(language)
    return Job(
        files,
        command,
        artifacts=build,
        binds=chain.binds,
        env={**chain.env, **({"UV_THREADPOOL_SIZE": "1"} if language == "javascript" else {})},
        extra_tasks=_RUN_TASKS.get(language, 0),
        address_space_mb=None if reserve is None else (0 if cgroups else budget + reserve),
    )
