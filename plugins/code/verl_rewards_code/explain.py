"""Why a test did not pass: a short excerpt of what its run did, for extra info.

Every function here is bounded and linear in the run's output: the first
token where the output and the expected output differ (found in one pass),
the last lines of stderr (already a tail of at most a few KB), values shown
by :mod:`reprlib` with small limits. Nothing is longer than a few hundred
characters per test.
"""

from __future__ import annotations

import operator
import re
import reprlib
import signal
from collections.abc import Sequence
from itertools import compress, count
from typing import Any, Literal

from .compare import token_match
from .outcome import Verdict
from .sandbox import Limits, RunResult
from .spec import Call, ProgramTest

STDERR_LINES = 12
STDERR_CHARS = 1200
SHOWN_CHARS = 80  # of a token, or of each side of a differing line
COMPILE_LINES = 5

# Which tests' details a sample's ``explanation`` gives: the first that did not pass, all, or none.
Explain = Literal["first", "all", "none"]
EXPLAIN: tuple[Explain, ...] = ("first", "all", "none")


def explain_sample(verdicts: Sequence[Verdict], explain: Explain, compile_error: str | None = None) -> str | None:
    """The sample's ``explanation``: for the first test that did not pass (or each,
    with ``all``), ``test N of M: status: detail``; the compiler's first lines when
    the program did not compile; None when every test passed, or with ``none``."""
    if explain == "none":
        return None
    if compile_error is not None:
        lines = compile_error.strip().split("\n")[:COMPILE_LINES]
        return "the program was not run: " + "\n".join(lines)
    blocks = []
    for index, verdict in enumerate(verdicts):
        if verdict.status in ("pass", "skipped"):
            continue
        detail = verdict.detail or (
            "not run: the sample's time budget was spent" if verdict.status == "timeout" else "not run")
        blocks.append(f"test {index + 1} of {len(verdicts)}: {verdict.status}: {detail}")
        if explain == "first":
            break
    return "\n\n".join(blocks) or None


def run_detail(
    result: RunResult, test: ProgramTest, status: str, limits: Limits, stdout: str | None = None,
    value: tuple[bool, Any] = (False, None),
) -> str:
    """What went wrong in a run whose test has ``status``: the program's answer
    against the expected one for ``fail`` (``stdout``: the output judged; ``value``:
    a call test's ``(found, returned)``), how the run ended otherwise, then the
    last lines of its stderr."""
    lines = [_what(result, test, status, limits, stdout, value)]
    tail = stderr_tail(result.stderr)
    if tail:
        lines.append("stderr (last lines):\n" + tail)
    return "\n".join(lines)


def _what(
    result: RunResult, test: ProgramTest, status: str, limits: Limits, stdout: str | None,
    value: tuple[bool, Any],
) -> str:
    if status == "sandbox_error":
        return f"the sandbox failed: {_cut(result.setup_error or '', 4 * SHOWN_CHARS)}"
    if status == "timeout":
        return f"did not finish within its time limit ({round(limits.timeout_s, 2):g} s of wall clock, {limits.cpu_s} s of CPU)"
    if status == "memory":
        return f"ran out of memory (memory_mb={limits.memory_mb})"
    if status == "output_limit":
        return f"wrote more than max_output_bytes={limits.max_output_bytes}"
    if status == "error":
        return f"crashed: {_ending(result)}"
    if test.call is not None:
        return _call_difference(test.call, value)
    if test.assertion is not None:
        return f"the assertion did not hold: {_cut(test.assertion.strip(), 4 * SHOWN_CHARS)}"
    return output_difference(stdout if stdout is not None else result.stdout, test.expected or "")


def _ending(result: RunResult) -> str:
    if result.signal is not None:
        try:
            name = signal.Signals(result.signal).name
        except ValueError:
            name = str(result.signal)
        return f"killed by signal {name}"
    return f"exit status {result.exit_code}"


def _call_difference(call: Call, value: tuple[bool, Any]) -> str:
    found, returned = value
    expected = _short(call.expected)
    if not found:
        return f"returned no plain value (expected {expected})"
    return f"returned {_short(returned)}, expected {expected}"


def output_difference(stdout: str, expected: str) -> str:
    """Where ``stdout`` first differs from ``expected``: the first token that does not
    match (by the token rule), with its line on each side, or the first line that
    differs when every token matches (whitespace, or another judge's rule). The
    scans run in C (``str.split``, ``map``, ``itertools``, a regex that cannot
    backtrack); Python code runs only for tokens that differ as text, as the
    comparison itself did."""
    got, want = stdout.split(), expected.split()
    index = _first_token_difference(got, want)
    if index is None:
        return _line_difference(_split_lines(stdout), _split_lines(expected))
    if index >= len(got):
        line, _ = _place(expected, index)
        return (f"the output ended after {index} tokens; expected token {index + 1}: "
                f"{_cut(want[index])} (expected line {line + 1})")
    got_line, got_text = _place(stdout, index)
    if index >= len(want):
        return (f"the output has more than the {index} tokens expected: token {index + 1} is "
                f"{_cut(got[index])} (line {got_line + 1})")
    want_line, want_text = _place(expected, index)
    return (f"token {index + 1} differs: got {_cut(got[index])} (line {got_line + 1}: "
            f"{_window(got_text, got[index])}), expected {_cut(want[index])} "
            f"(line {want_line + 1}: {_window(want_text, want[index])})")


def _first_token_difference(got: list[str], want: list[str]) -> int | None:
    """The index of the first token pair that does not match (or of the first token
    one side lacks); None when they all match."""
    for index in compress(count(), map(operator.ne, got, want)):
        if not token_match(got[index], want[index]):
            return index
    return None if len(got) == len(want) else min(len(got), len(want))


def _place(text: str, index: int) -> tuple[int, str]:
    """The line (0-based) holding token ``index`` of ``text`` (as ``str.split()`` counts
    tokens: ``\\s`` is ``str.isspace()``), and that line. One possessive regex skips
    the tokens before it in C: \\S and \\s are disjoint, so it cannot backtrack."""
    skipped = re.compile(rf"\s*(?:\S+\s+){{{index}}}+").match(text)
    start = skipped.end() if skipped is not None else 0
    line_end = text.find("\n", start)
    line = text[text.rfind("\n", 0, start) + 1 : len(text) if line_end == -1 else line_end]
    return text.count("\n", 0, start), line


def _line_difference(got_lines: list[str], want_lines: list[str]) -> str:
    differing = map(operator.ne, map(str.strip, got_lines), map(str.strip, want_lines))
    index = next(compress(count(), differing), min(len(got_lines), len(want_lines)))
    got_line = got_lines[index] if index < len(got_lines) else ""
    want_line = want_lines[index] if index < len(want_lines) else ""
    if got_line.strip() == want_line.strip():
        return "the output differs from the expected one only in whitespace"
    return f"line {index + 1} differs: got {_cut(got_line)}, expected {_cut(want_line)}"


def _split_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n")


def _window(line: str, token: str) -> str:
    """``line`` cut to about ``2 * SHOWN_CHARS`` characters around ``token``'s first occurrence."""
    line = line.strip()
    if len(line) <= 2 * SHOWN_CHARS:
        return repr(line)
    start = max(0, line.find(token) - SHOWN_CHARS // 2)
    piece = line[start : start + 2 * SHOWN_CHARS]
    return ("..." if start else "") + repr(piece) + ("..." if start + 2 * SHOWN_CHARS < len(line) else "")


def _cut(text: str, limit: int = SHOWN_CHARS) -> str:
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def stderr_tail(stderr: str) -> str:
    """The last ``STDERR_LINES`` lines of ``stderr`` (at most ``STDERR_CHARS``, cut at a
    line's start), indented, the run's tree left out of traceback paths; empty when
    there is none."""
    text = stderr.rstrip()[-STDERR_CHARS:]
    if len(stderr.rstrip()) > STDERR_CHARS and "\n" in text:
        text = text.split("\n", 1)[1]  # whole lines only
    lines = [_short_path(line) for line in text.split("\n") if line.strip()][-STDERR_LINES:]
    return "\n".join(f"  {line}" for line in lines)


def _short_path(line: str) -> str:
    """A traceback line with the run's directory left out: ``File "main.py", line 2``."""
    start = line.find('File "')
    end = line.find(_RUN_DIRECTORY, start)
    if start == -1 or end == -1 or _RUN_TREE not in line[start:end]:
        return line
    return line[: start + len('File "')] + line[end + len(_RUN_DIRECTORY) :]


_RUN_TREE, _RUN_DIRECTORY = "verl-rewards-code-", "/io/"


class _Short(reprlib.Repr):
    """reprlib with small limits, and no ``repr()`` of a huge integer (quadratic, and
    refused past 4300 digits)."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother, self.maxlong = 3, SHOWN_CHARS, SHOWN_CHARS, SHOWN_CHARS
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = self.maxfrozenset = 8

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 4 * SHOWN_CHARS:
            return f"<an integer of {x.bit_length()} bits>"
        return super().repr_int(x, level)


def _short(value: Any) -> str:
    return _Short().repr(value)
