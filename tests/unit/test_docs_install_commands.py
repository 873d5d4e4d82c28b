"""Every `pip install` the docs show works here: verl-rewards is on no package index, so
each command names something installable from this repository (a path in it, `-e`, a
wheel built into dist/ by scripts/build_dists.sh), a third-party package at the version
constraints.txt pins, or says it needs the network ("needs the network" on its line, or
in its paragraph for a command inside prose). A plugin of this repository named by path
brings the distributions of ours it depends on in the same command, unless pip is told
--no-deps or the text says they are "already installed"."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
MARK = "needs the network"
INSTALLED = "already installed"
# Where the docs put this checkout when they install from it elsewhere.
CHECKOUT_PREFIXES = ("/path/to/verl-rewards/", "./verl-rewards/", "verl-rewards/")
VALUE_OPTIONS = {"-c", "--constraint", "-r", "--requirement", "-f", "--find-links", "-i", "--index-url",
                 "--extra-index-url", "-t", "--target", "--python", "--prefix", "--root"}
COMMAND = re.compile(r"^(?:\$ )?(?:\S*python\S* -m |uv |\S*/)?pip3? install\b(.*)$")

pytestmark = pytest.mark.docs


def _docs() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for folder in ("plugins", "examples"):
        found += sorted(p for p in (ROOT / folder).rglob("*.md") if "node_modules" not in p.parts)
    return found


def _commands(text: str) -> Iterator[tuple[int, str, str]]:
    """(line number, command, the text that may mark it) for each `pip install` command:
    the lines of fenced blocks (continuations joined), and code spans in prose."""
    lines = text.splitlines()
    fenced, paragraph_start, i = False, 0, 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced:
            start = i
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            for part in re.split(r"\s(?:&&|\|\||;|\|)\s", line.strip()):
                if COMMAND.match(part):
                    yield start + 1, part, part
        else:
            if not line.strip():
                paragraph_start = i + 1
            paragraph = "\n".join(lines[paragraph_start:_paragraph_end(lines, i)])
            for span in re.findall(r"`([^`]+)`", line):
                if COMMAND.match(span.strip()):
                    yield i + 1, span.strip(), paragraph
        i += 1


def _paragraph_end(lines: list[str], i: int) -> int:
    while i < len(lines) and lines[i].strip():
        i += 1
    return i


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def _ours() -> set[str]:
    names = set()
    for pyproject in [ROOT / "pyproject.toml", *ROOT.glob("plugins/*/pyproject.toml"),
                      *ROOT.glob("examples/*/pyproject.toml"), *ROOT.glob("tests/fixtures/*/pyproject.toml")]:
        match = re.search(r'^name = "([^"]+)"', pyproject.read_text(), flags=re.MULTILINE)
        assert match, pyproject
        names.add(canonicalize_name(match[1]))
    return names


def _split(command: str) -> tuple[list[str], dict[str, str]]:
    """The requirements a command names, and the options it gives a value."""
    words = shlex.split(COMMAND.match(command)[1], comments=True)  # type: ignore[index]
    requirements, options = [], {}
    while words:
        word = words.pop(0)
        if word in ("-e", "--editable"):
            requirements.append(words.pop(0))
        elif word in VALUE_OPTIONS:
            options[word] = words.pop(0) if words else ""
        elif word.startswith("-"):
            options[word.split("=")[0]] = word.partition("=")[2]
        else:
            requirements.append(word)
    return requirements, options


def problem(command: str, context: str, pins: dict[str, str], ours: set[str]) -> str | None:
    """Why ``command`` would not work here, or None (``context``: its line or paragraph)."""
    requirements, options = _split(command)
    context = " ".join(context.split())  # a paragraph's lines wrap anywhere
    marked = MARK in context
    constrained = options.get("-c", options.get("--constraint")) == "constraints.txt"
    local_index = "--find-links" in options or "-f" in options
    paths = [r for r in requirements if re.match(r"^[.~/]|^dist/|/", r)]
    for requirement in paths:
        missing = _missing_path(requirement, ours)
        if missing:
            return missing
    if "--no-deps" not in options and INSTALLED not in context:
        unmet = _unmet_dependencies(paths, ours)
        if unmet:
            return unmet
    for requirement in requirements:
        if requirement in paths:
            continue
        try:
            parsed = Requirement(requirement)
        except InvalidRequirement:
            return f"{requirement!r} is neither a path nor a requirement"
        name = canonicalize_name(parsed.name)
        if name in ours:
            if not local_index:
                return (f"{parsed.name} is on no package index: install it from a checkout "
                        f"(a path) or from the wheels scripts/build_dists.sh writes (dist/)")
        elif not marked:
            exact = [s.version for s in parsed.specifier if s.operator == "=="]
            if name not in pins:
                return f"{parsed.name} is not in constraints.txt (pin it there, or say '{MARK}')"
            if exact != [pins[name]] and not constrained:
                return (f"{parsed.name} is not pinned to constraints.txt's {pins[name]}: write "
                        f"{parsed.name}=={pins[name]} or add -c constraints.txt (or say '{MARK}')")
    return None


def _in_repo(requirement: str) -> str:
    """The path a requirement names, relative to the checkout where the docs mean it."""
    path = re.sub(r"\[[^\]]*\]$", "", requirement).rstrip("/") + "/"
    for prefix in CHECKOUT_PREFIXES:
        if path.startswith(prefix):
            path = "./" + path[len(prefix):]
    return path.rstrip("/") if path != "./" else "."


def _unmet_dependencies(paths: list[str], ours: set[str]) -> str | None:
    """A distribution of ours that one named by path depends on and the command leaves out."""
    named, needed = set(), {}
    for requirement in paths:
        path = _in_repo(requirement)
        built = re.match(r"^(?:\./)?dist/([A-Za-z0-9_]+)-\*", path)
        if built:
            named.add(canonicalize_name(built[1]))
            continue
        pyproject = ROOT / path / "pyproject.toml"
        if not (_inside(path) and pyproject.is_file()):
            continue
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        named.add(canonicalize_name(project["name"]))
        for dependency in project.get("dependencies", []):
            name = canonicalize_name(Requirement(dependency).name)
            if name in ours:
                needed.setdefault(name, path)
    for name, path in needed.items():
        if name not in named:
            return (f"{path} needs {name}, which no index serves: name it in the same command "
                    f"(pip install . {path}) or say it is '{INSTALLED}'")
    return None


def _inside(path: str) -> bool:
    return path == "." or path.startswith(("./plugins/", "./examples/", "./tests/"))


def _missing_path(requirement: str, ours: set[str]) -> str | None:
    path = _in_repo(requirement)
    built = re.match(r"^(?:\./)?dist/([A-Za-z0-9_]+)-\*\.(?:whl|tar\.gz)$", path)
    if built:
        return None if canonicalize_name(built[1]) in ours else f"no distribution builds {path}"
    if _inside(path) and not (ROOT / path / "pyproject.toml").is_file():
        return f"{path} is not a distribution in this repository"
    return None  # the reader's own project (./my-rewards), or a file of theirs


def _every_command() -> list[tuple[str, int, str, str]]:
    found = []
    for doc in _docs():
        for line, command, context in _commands(doc.read_text(encoding="utf-8")):
            found.append((doc.relative_to(ROOT).as_posix(), line, command, context))
    return found


def test_the_docs_show_pip_install_commands_at_all():
    docs = {doc for doc, *_ in _every_command()}
    assert {"README.md", "docs/writing-a-plugin.md", "plugins/math/README.md"} <= docs


@pytest.mark.parametrize(("doc", "line", "command", "context"), _every_command(),
                         ids=[f"{doc}:{line}" for doc, line, *_ in _every_command()])
def test_every_pip_install_in_the_docs_installs_from_here_or_says_it_needs_the_network(
        doc, line, command, context):
    assert problem(command, context, _pins(), _ours()) is None, f"{doc}:{line}: {command}"


@pytest.mark.parametrize(("command", "why"), [
    ("pip install 'verl-rewards[parquet]'",
     "verl-rewards is on no package index: install it from a checkout (a path) or from the wheels "
     "scripts/build_dists.sh writes (dist/)"),
    ("pip install torch", "torch is not pinned to constraints.txt's 2.13.0: write torch==2.13.0 or add "
                          "-c constraints.txt (or say 'needs the network')"),
    ("pip install ./plugins/nope", "./plugins/nope is not a distribution in this repository"),
    ("pip install dist/verl_rewards_nope-*.whl", "no distribution builds dist/verl_rewards_nope-*.whl"),
    ("pip install left-pad", "left-pad is not in constraints.txt (pin it there, or say 'needs the network')"),
    ("pip install ./plugins/math", "./plugins/math needs verl-rewards, which no index serves: name it in "
                                   "the same command (pip install . ./plugins/math) or say it is "
                                   "'already installed'"),
])
def test_a_command_that_would_fail_here_is_found(command, why):
    assert problem(command, "", _pins(), _ours()) == why


@pytest.mark.parametrize("command", [
    "pip install -e '.[serve]' -e ./plugins/math",
    "pip install /path/to/verl-rewards /path/to/verl-rewards/plugins/math",
    "pip install . ./plugins/math ./plugins/code ./plugins/verl",
    "pip install --no-deps --no-build-isolation -e ./plugins/math",
    "pip install dist/verl_rewards-*.whl dist/verl_rewards_math-*.whl",
    'pip install --no-deps "verifiers==0.4.0" -c constraints.txt',
    "pip install torch==2.13.0",
    "pip install --force-reinstall",
    ".venv/bin/python -m pip install -e './my_reward[test]'",
])
def test_a_command_that_works_here_passes(command):
    assert problem(command, "", _pins(), _ours()) is None
