"""Find the reward's own frames in a traceback, for errors that point at the user's line.

The reward's own code is the module tree of the first frame the framework
called into (the plugin's top-level package, or a file reward's materialised
module); whoever called the framework (a trainer, a test) is not the reward. Frames of ``verl_rewards`` itself, of the standard
library and of other packages are not the reward's own code. Only module
names and code objects are read, so this works for a file reward whose file
does not exist here (its source is in :mod:`linecache`).
"""

from __future__ import annotations

import linecache
import re
import sysconfig
import types
from typing import NamedTuple

_FRAMEWORK = "verl_rewards"
_STDLIB = tuple({sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib")})


class Frame(NamedTuple):
    """One frame of the reward's own code."""

    file: str
    line: int
    function: str

    @property
    def location(self) -> str:
        """``FILE:LINE in FUNC``."""
        return f"{self.file}:{self.line} in {self.function}"

    def source_line(self) -> str:
        """The frame's source line, stripped ('' when unknown)."""
        return linecache.getline(self.file, self.line).strip()


def reward_frames(exc: BaseException) -> list[Frame]:
    """The frames of ``exc``'s traceback that belong to the reward's own code, outermost first."""
    return _own_frames(_walk(exc.__traceback__))


def innermost(exc: BaseException) -> Frame | None:
    """The innermost frame of the reward's own code in ``exc``'s traceback, if any."""
    frames = reward_frames(exc)
    return frames[-1] if frames else None


def running(frame: types.FrameType | None) -> Frame | None:
    """The innermost frame of the reward's own code in a live stack (``frame`` and its
    callers), read as :func:`innermost` reads a traceback: where a running call is now."""
    tb = None
    while frame is not None:  # innermost first, so each new entry wraps the ones inside it
        tb = types.TracebackType(tb, frame, frame.f_lasti, frame.f_lineno or 0)
        frame = frame.f_back
    frames = _own_frames(_walk(tb))
    return frames[-1] if frames else None


_LOCATION = re.compile(r" \(at (?P<file>.+?):(?P<line>\d+) in (?P<func>[^)\s]+)\)")


def parse_location(text: str) -> Frame | None:
    """The frame an error text names with ``(at FILE:LINE in FUNC)``, if it names one."""
    match = _LOCATION.search(text)
    if match is None:
        return None
    return Frame(match["file"], int(match["line"]), match["func"])


def format_frames(frames: list[Frame]) -> list[str]:
    """Traceback-style lines for ``frames``: location, then the source line when known."""
    lines: list[str] = []
    for frame in frames:
        lines.append(f'  File "{frame.file}", line {frame.line}, in {frame.function}')
        source = frame.source_line()
        if source:
            lines.append(f"    {source}")
    return lines


def _own_frames(entries: list[types.TracebackType]) -> list[Frame]:
    root = _entry_root(entries)
    if root is None:
        return []
    return [
        Frame(tb.tb_frame.f_code.co_filename, tb.tb_lineno, tb.tb_frame.f_code.co_name)
        for tb in entries
        if _is_candidate(tb) and _root(tb) == root
    ]


def _entry_root(entries: list[types.TracebackType]) -> str | None:
    """The top-level module of the reward's entry: the first candidate frame after the
    framework's first frame (whoever called the framework is not the reward), else the first."""
    first_framework = next((i for i, tb in enumerate(entries) if _root(tb) == _FRAMEWORK), None)
    start = 0 if first_framework is None else first_framework
    for tb in entries[start:]:
        if _is_candidate(tb):
            return _root(tb)
    return None


def _walk(tb: types.TracebackType | None) -> list[types.TracebackType]:
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    return entries


def _module_of(tb: types.TracebackType) -> str:
    name = tb.tb_frame.f_globals.get("__name__")
    return name if isinstance(name, str) else ""


def _root(tb: types.TracebackType) -> str:
    return _module_of(tb).split(".")[0]


def _is_candidate(tb: types.TracebackType) -> bool:
    """Not the framework, not the standard library, not frozen or generated code."""
    root = _root(tb)
    if not root or root == _FRAMEWORK:
        return False
    return not tb.tb_frame.f_code.co_filename.startswith("<") and not _is_stdlib(tb)


def _is_stdlib(tb: types.TracebackType) -> bool:
    filename = tb.tb_frame.f_code.co_filename
    return filename.startswith(_STDLIB) and "-packages" not in filename
