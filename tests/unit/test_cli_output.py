"""The CLI's one output channel: `emit` to stdout, `say(kind, text)` to stderr."""

from __future__ import annotations

import ast
import itertools
import logging
from pathlib import Path

import pytest

import verl_rewards.cli
from verl_rewards.cli import output
from verl_rewards.cli.output import emit, say, show_library_logs

CLI = Path(verl_rewards.cli.__file__).parent
STREAMS = {"sys.stderr", "sys.__stderr__", "sys.stdout", "sys.__stdout__"}


@pytest.mark.parametrize(("kind", "text", "line"), [
    ("error", "bad config", "verl-rewards: error: bad config"),
    ("warning", "a thread is left", "verl-rewards: warning: a thread is left"),
    ("interrupted", "out.jsonl holds 4 whole rows", "verl-rewards: interrupted: out.jsonl holds 4 whole rows"),
    ("interrupted", "", "verl-rewards: interrupted"),
    ("note", "'twin' is declared by 2 distributions", "note: 'twin' is declared by 2 distributions"),
    ("sample_error", "KeyError: 'x' (at r.py:3 in f)", "error: KeyError: 'x' (at r.py:3 in f)"),
    ("line", "  ok 3, failed 0", "  ok 3, failed 0"),
    ("line", "", ""),
])
def test_a_message_looks_as_its_kind_says_and_goes_to_stderr_alone(capsys, kind, text, line):
    say(kind, text)
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", line + "\n")


def test_emit_writes_results_to_stdout_alone(capsys):
    emit("NAME  VERSION", "gsm8k 0.1.0")
    assert capsys.readouterr() == ("NAME  VERSION\ngsm8k 0.1.0\n", "")


def test_a_library_warning_or_error_is_said_with_the_program_name(capsys):
    logger = logging.getLogger("verl_rewards")
    before = list(logger.handlers)
    show_library_logs()
    show_library_logs()  # once per process
    try:
        added = [h for h in logger.handlers if h not in before]
        assert len(added) <= 1 and any(type(h).__name__ == "StderrHandler" for h in logger.handlers)
        logging.getLogger("verl_rewards.remote").warning("GET %s/healthz: refused", "http://h")
        logging.getLogger("verl_rewards.serve").error("the pool died")
        logging.getLogger("verl_rewards.serve").info("not shown")
        assert capsys.readouterr().err == ("verl-rewards: warning: GET http://h/healthz: refused\n"
                                           "verl-rewards: error: the pool died\n")
    finally:
        for handler in added:
            logger.removeHandler(handler)


def _stray_output(source: str) -> list[str]:
    """Each call in ``source`` that prints or writes to a standard stream itself."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if (name == "print" or name.rpartition(".")[2].startswith("print_")
                or (name.rpartition(".")[0] in STREAMS and name.endswith((".write", ".writelines")))
                or (name == "os.write" and node.args and ast.unparse(node.args[0]) in ("1", "2"))
                or any(ast.unparse(a) in STREAMS for a in arguments)):
            found.append((node.lineno, ast.unparse(node)[:80]))
    return [f"line {n}: {call}" for n, call in sorted(found)]


def test_no_cli_module_but_output_prints_or_writes_to_a_standard_stream():
    stray = {path.name: calls for path in sorted(CLI.glob("*.py")) if path.name != "output.py"
             if (calls := _stray_output(path.read_text(encoding="utf-8")))}
    assert stray == {}


def _prefixes(source: str) -> list[str]:
    """The strings in ``source`` that put the program's name in front of a message."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("verl-rewards: "):
            found.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            parts = node.values
            found += [ast.unparse(node) for a, b in itertools.pairwise(parts)
                      if isinstance(a, ast.FormattedValue) and ast.unparse(a.value) == "PROG"
                      and isinstance(b, ast.Constant) and str(b.value).startswith(":")]
    return found


def test_the_program_name_is_put_in_front_of_messages_in_one_place():
    named = {path.name: found for path in CLI.glob("*.py") if path.name != "output.py"
             if (found := _prefixes(path.read_text(encoding="utf-8")))}
    assert named == {}
    assert _prefixes('x = f"{PROG}: error: {m}"\ny = "verl-rewards: note: "\n# verl-rewards: ok\n') == [
        "f'{PROG}: error: {m}'", "verl-rewards: note: "]
    assert output.PROG == "verl-rewards"


def test_the_scan_finds_each_way_of_writing_past_the_channel():
    source = """
import sys, os, traceback
print("x")
print("x", file=sys.stderr)
sys.stderr.write("x")
parser.print_help(sys.stderr)
traceback.print_exception(e)
tqdm(total=3, file=sys.stderr)
os.write(2, b"x")
sys.stdout = sys.stderr
sys.stderr.flush()
"""
    assert [line.split(":")[0] for line in _stray_output(source)] == [
        f"line {n}" for n in (3, 4, 5, 6, 7, 8, 9)]
