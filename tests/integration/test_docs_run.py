"""The README's and docs' shell blocks that a reader is told to run, run as written, print what
the docs show (tests/unit/test_docs_commands.py lists every block: run here or elsewhere, or why
not).

A block runs in a temporary directory with this environment's scripts first on PATH (an
activated venv); a block that installs something runs in a fresh venv that sees this
environment's packages (installs nothing from the network: pip builds with the setuptools
here and uses no index). Shown output is compared line by line: a line ``...`` stands for
any lines, ``...`` inside a line for any text, and timings (``0.01 s``, ``242.1 samples/s``)
for any number; ``# exit N`` after a shown line is the command's exit status."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SHELL = ("bash", "console", "sh", "shell")
TIMING = re.compile(r"\d[\d,]*(?:\.\d+)? (?:s|ms|samples/s)\b")
EXIT = re.compile(r"\s+# exit (\d+)$")

pytestmark = pytest.mark.slow


class Block(NamedTuple):
    language: str
    text: str
    output: str | None  # the plain ``` block right after it, if any


def blocks(doc: str) -> list[Block]:
    """The shell blocks of ``doc`` in order, each with the output block that follows it."""
    found: list[Block] = []
    parts = re.findall(r"```([a-z]*)\n(.*?)```", (ROOT / doc).read_text(), flags=re.S)
    for i, (language, text) in enumerate(parts):
        if language in SHELL:
            after = parts[i + 1] if i + 1 < len(parts) and parts[i + 1][0] == "" else None
            found.append(Block(language, text, after[1] if after else None))
    return found


def block(doc: str, first_line: str) -> Block:
    [found] = [b for b in blocks(doc) if b.text.splitlines()[0].strip() == first_line]
    return found


def matches(shown: str, actual: str) -> bool:
    """Whether ``actual`` is what ``shown`` shows (see the module docstring)."""
    pattern = []
    for line in shown.rstrip("\n").splitlines():
        line = line.rstrip()
        if line.strip() == "...":
            pattern.append(r"(?:[^\n]*\n)*?")
            continue
        pieces = []
        for piece in re.split(r"(\.\.\.)", line):
            if piece == "...":
                pieces.append(".*?")
                continue
            at = 0
            for timing in TIMING.finditer(piece):
                pieces.append(re.escape(piece[at:timing.start()]) + r"[\d,]+(?:\.\d+)? " + re.escape(timing[0].split()[-1]))
                at = timing.end()
            pieces.append(re.escape(piece[at:]))
        pattern.append("".join(pieces) + r"[ \t]*\n")
    text = "".join(line.rstrip() + "\n" for line in actual.rstrip("\n").splitlines())
    return re.fullmatch("".join(pattern), text, flags=re.S) is not None


def test_the_matcher():
    assert matches("a\n...\nz\n", "a\nb\nc\nz\n") and matches("a ... z", "a b c z")
    assert matches("done in 0.01 s (242.1 samples/s)", "done in 1.50 s (1,055.3 samples/s)")
    assert not matches("a\nz", "a\nb\nz") and not matches("scored 3", "scored 4")


def _env(path_dir: Path = BIN, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "RAY_ADDRESS")}
    return {**env, "PATH": f"{path_dir}{os.pathsep}{env['PATH']}", "COLUMNS": "200", **extra}


def _bash(script: str, cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


class Command(NamedTuple):
    text: str
    shown: str
    status: int


def transcript(text: str) -> list[Command]:
    """A console block's ``$ command``s (continuation and heredoc lines included), each with
    the output shown under it and its exit status (``# exit N``, else 0)."""
    commands: list[Command] = []
    lines = [line[2:] if line.startswith("  ") and text.startswith("  ") else line for line in text.splitlines()]
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            i += 1
            continue
        command = [lines[i][2:]]
        while command[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            command.append(lines[i])
        heredoc = re.search(r"<<'(\w+)'", command[0])
        if heredoc:
            while i + 1 < len(lines) and lines[i] != heredoc[1]:
                i += 1
                command.append(lines[i])
        shown, status = [], 0
        while i + 1 < len(lines) and not lines[i + 1].startswith("$ "):
            i += 1
            exit_status = EXIT.search(lines[i])
            status = int(exit_status[1]) if exit_status else status
            shown.append(EXIT.sub("", lines[i]))
        commands.append(Command("\n".join(command), "\n".join(shown).strip("\n"), status))
        i += 1
    return commands


def run_transcript(text: str, cwd: Path, env: dict[str, str]) -> None:
    """Run each command that shows output (and every one that is not ``verl-rewards``: the
    files the others read), comparing its output and exit status with the doc's."""
    for command in transcript(text):
        if not command.shown and command.text.startswith("verl-rewards"):
            continue
        done = _bash(f"exec 2>&1\n{command.text}", cwd, env)
        assert done.returncode == command.status, (command.text, done.stdout)
        if command.shown:
            assert matches(command.shown, done.stdout), (command.text, command.shown, done.stdout)


# -- the README's Quickstart ------------------------------------------------------------


def test_readme_quickstart_scores_the_file_and_prints_what_it_shows(tmp_path):
    quickstart = block("README.md", "cat > samples.jsonl <<'EOF'")
    done = _bash(quickstart.text, tmp_path, _env())
    assert done.returncode == 0, done.stderr
    assert quickstart.output is not None and matches(quickstart.output, done.stdout), done.stdout
    assert (tmp_path / ".scored.jsonl.run.json").is_file()  # the hidden record the Quickstart names
    assert "`.scored.jsonl.run.json`" in (ROOT / "README.md").read_text()


def test_readme_list_and_show_print_the_rows_shown(tmp_path):
    listing = block("README.md", "verl-rewards list")
    done = _bash(listing.text, tmp_path, _env())
    assert done.returncode == 0, done.stderr
    # This environment also has the test-only plugins (so the columns are wider): every row
    # the README shows is there.
    assert _missing_rows(listing.output or "", done.stdout) == []


def test_readme_trainer_runs_print_the_figures_the_readme_quotes(tmp_path):
    """Both Quickstart training commands as written (seeded: the figures repeat), side by side
    (one core each), from a directory that has the checkout's examples/ and imports the
    trainer as the checkout does."""
    commands = block("README.md", "python -m trainer.main trainer.total_steps=50 trainer.output_dir=outputs/quickstart \\")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    with contextlib.ExitStack() as stack:
        runs = [subprocess.Popen(["bash", "-c", command], cwd=tmp_path, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True,
                                 env=_env(PYTHONPATH=str(ROOT), RAY_TMPDIR=stack.enter_context(own_ray_dir())))
                for command in commands.text.replace("\\\n", " ").splitlines()]
        outputs = [run.communicate(timeout=900)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [o[-2000:] for o in outputs]
    printed = [re.findall(r"reward \d\.\d+ -> \d\.\d+ \(first -> last step\)", o) for o in outputs]
    readme = (ROOT / "README.md").read_text()
    quoted = re.findall(r"`(reward \d\.\d+ -> \d\.\d+ \(first -> last step\))`",
                        readme[readme.index("**Train with a plugin**"):readme.index("## Why")])
    assert printed == [[q] for q in quoted] and len(quoted) == 2, (printed, quoted)


@contextlib.contextmanager
def own_ray_dir() -> Iterator[str]:
    """A RAY_TMPDIR of its own, so a command that starts Ray starts its own local session and
    never joins one a test recorded (``ray_current_cluster``); short, for Ray's socket paths."""
    path = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _missing_rows(shown: str, printed: str) -> list[str]:
    """The rows of a shown table (columns split on spaces) that ``printed`` does not have."""
    rows = [line.split() for line in printed.splitlines()]
    return [line for line in shown.splitlines() if line != "..." and line.split() not in rows]


def test_readme_audit_prints_what_it_shows(tmp_path):
    run_transcript(block("README.md", "$ verl-rewards audit gameable").text, tmp_path, _env())


# -- in a fresh venv: what the docs install --------------------------------------------


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv seeing this environment's packages (chained in by a .pth file, as
    --system-site-packages would the base interpreter's), with `pip` and `verl-rewards`
    scripts, as an activated one has."""
    venv = tmp_path_factory.mktemp("docs-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=120)
    purelib = subprocess.run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "_docs_parent.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    for script, module in (("pip", "pip"), ("verl-rewards", "verl_rewards")):
        (venv / "bin" / script).write_text(f'#!/bin/sh\nexec "{venv / "bin" / "python"}" -m {module} "$@"\n')
        (venv / "bin" / script).chmod(0o755)
    return venv


def _offline(venv: Path) -> dict[str, str]:
    """The venv first on PATH; pip without an index, building with the setuptools here."""
    return _env(venv / "bin", PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1",
                VIRTUAL_ENV=str(venv))


def test_readme_new_plugin_steps_work_as_shown_in_a_fresh_venv(venv, tmp_path):
    steps = block("README.md", "verl-rewards new my_reward")
    for line in steps.text.splitlines():
        command, _, claim = line.partition("  #")
        done = _bash(command, tmp_path, _offline(venv))
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        if claim.strip():
            assert claim.strip() in done.stdout, (command, claim, done.stdout)


def test_readme_plugin_in_ten_lines_installs_and_checks_in_a_fresh_venv(venv, tmp_path):
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## A plugin in ten lines"):readme.index("## Scoring from Python")]
    module = re.search(r"```python\n(# my_rewards/exact.py\n.*?)```", section, flags=re.S)[1]  # type: ignore[index]
    pyproject = re.search(r"```toml\n# pyproject.toml\n(.*?)```", section, flags=re.S)[1]  # type: ignore[index]
    (tmp_path / "my_rewards").mkdir()
    (tmp_path / "my_rewards" / "__init__.py").write_text("")  # "an empty my_rewards/__init__.py"
    (tmp_path / "my_rewards" / "exact.py").write_text(module)
    (tmp_path / "pyproject.toml").write_text(pyproject)
    for command in ("pip install .", "verl-rewards check exact"):
        assert f"`{command}`" in " ".join(section.split())
        done = _bash(command, tmp_path, _offline(venv))
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert done.stdout.startswith("ok   exact (my-rewards 0.1.0): sample, sync function; 1/1 example passed")


# -- docs/cli.md ---------------------------------------------------------------------------


@pytest.mark.parametrize("first_line", [
    "$ verl-rewards show exact_match", "$ verl-rewards check gsm8k think_answer_format",
    "$ cat > samples.jsonl <<'EOF'", "$ verl-rewards score -i nope.jsonl -o out.jsonl reward.plugin=exact_match",
])
def test_cli_md_transcripts_run_as_shown(tmp_path, first_line):
    text = block("docs/cli.md", first_line).text
    if "samples.jsonl -o" in text and not (tmp_path / "samples.jsonl").exists():  # the file its score section wrote
        run_transcript(block("docs/cli.md", "$ cat > samples.jsonl <<'EOF'").text, tmp_path, _env())
    run_transcript(text, tmp_path, _env())


def test_cli_md_list_shows_rows_the_listing_has(tmp_path):
    [plain, as_json] = transcript(block("docs/cli.md", "$ verl-rewards list").text)
    done = _bash(plain.text, tmp_path, _env())
    assert _missing_rows(plain.shown, done.stdout) == []
    done = _bash(as_json.text, tmp_path, _env())
    assert done.stdout.startswith(as_json.shown.split("  ...")[0].rstrip().rstrip(","))
