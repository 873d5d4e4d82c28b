"""The docs' tables and synopses say what the code has: checked, so they cannot drift.

When one of these fails after a change to the code, update the doc it names
(the failure says what is missing and what is extra).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import typing
from pathlib import Path

import pytest
import yaml

import verl_rewards
from verl_rewards.cli.main import COMMANDS, build_parser
from verl_rewards.config import RewardConfig

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(verl_rewards.__file__).parent

pytestmark = pytest.mark.docs


def _section(doc: str, heading: str) -> str:
    text = (ROOT / doc).read_text()
    start = text.index(f"\n{heading}\n")
    following = re.search(r"\n#{1,2} ", text[start + len(heading) + 2:])
    return text[start: start + len(heading) + 2 + (following.start() if following else len(text))]


def _fenced(text: str, language: str = "") -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


# -- README: the `reward` section's keys and defaults ---------------------------


def _readme_reward_section() -> tuple[dict[str, object], str]:
    [block] = _fenced(_section("README.md", "## Configuration"), "yaml")
    return yaml.safe_load(block)["reward"], block


def test_readme_config_table_lists_every_reward_config_field_with_its_default():
    documented, _ = _readme_reward_section()
    fields = {f.name: f for f in dataclasses.fields(RewardConfig)}
    assert sorted(documented) == sorted(fields), "update README.md's ## Configuration block"
    for name, value in documented.items():
        field = fields[name]
        default = field.default_factory() if field.default_factory is not dataclasses.MISSING \
            else field.default
        assert value == default, f"README.md says reward.{name}: {value!r}; the default is {default!r}"


def _comment_of(block: str, key: str) -> str:
    """The comment on ``key``'s line and on the comment-only lines right after it."""
    lines = block.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{key}:"))
    end = start + 1
    while end < len(lines) and lines[end].strip().startswith("#"):
        end += 1
    return " ".join(line.partition("#")[2] for line in lines[start:end])


def test_readme_config_comments_name_every_choice_of_a_choice_key():
    _, block = _readme_reward_section()
    for name, hint in typing.get_type_hints(RewardConfig).items():
        if typing.get_origin(hint) is typing.Literal:
            comment = _comment_of(block, name)
            missing = [c for c in typing.get_args(hint) if not re.search(rf"\b{c}\b", comment)]
            assert missing == [], f"README.md: the comment on reward.{name} does not name {missing}"


# -- docs/architecture.md: the module table -------------------------------------


def _architecture_table() -> dict[str, str]:
    """``{module or package/: its description}`` from the first code block of architecture.md.

    A row is ``[Ln] name description`` (``Ln``: the layer, on its first row only); a line
    indented further continues the row above."""
    block = _fenced((ROOT / "docs/architecture.md").read_text())[0]
    rows: dict[str, str] = {}
    last = ""
    for line in block.splitlines():
        row = re.match(r"^(?:L\d+)?\s{0,4}(\S+(?:\.py|/))\s+(.*)$", line)
        if row:
            last = row.group(1)
            rows[last] = row.group(2).strip()
        elif line.strip():
            rows[last] += " " + line.strip()
    return rows


def test_architecture_module_table_matches_the_package():
    """Update the module table at the top of docs/architecture.md when a module is added,
    removed or renamed (top-level modules, and each package whose row lists its modules
    as ``name (what) | name ...``)."""
    table = _architecture_table()
    modules = {p.name for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    packages = {f"{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    outside = {name for name in table if name.endswith("/") and (ROOT / name).is_dir()
               and name not in packages}  # trainer/: next to the package, in the checkout
    assert sorted(set(table) - outside) == sorted(modules | packages)
    for package, description in table.items():
        if package not in packages or "|" not in description:
            continue
        listed = {segment.split()[0] for segment in description.split("|")}
        present = {p.stem for p in (PACKAGE / package).glob("*.py") if p.stem != "__init__"}
        assert listed == present, f"docs/architecture.md's {package} row"


# -- docs/cli.md: the synopsis --------------------------------------------------


def _synopsis() -> dict[str, str]:
    block = _fenced((ROOT / "docs/cli.md").read_text())[0]
    lines = [line for line in block.splitlines() if line.startswith("verl-rewards ")]
    return {line.split()[1] if not line.split()[1].startswith("[") else "": line for line in lines}


def _options(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    """Every option (its spellings, e.g. ``("-v", "--verbose")``) and positional metavar."""
    found: list[tuple[str, ...]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.append(("COMMAND",))
        elif action.option_strings:
            found.append(tuple(action.option_strings))
        else:
            found.append((str(action.metavar or action.dest),))
    return found


def _mentions(line: str, spellings: tuple[str, ...]) -> bool:
    return any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", line) for s in spellings)


def test_cli_synopsis_lists_every_global_option():
    line = _synopsis()[""]
    missing = [o for o in _options(build_parser("list")) if not _mentions(line, o)]
    assert missing == [], f"docs/cli.md synopsis: {line!r} lacks {missing}"


def test_cli_synopsis_has_a_line_for_every_command_in_the_parsers_order():
    assert [c for c in _synopsis() if c] == [m.NAME for m in COMMANDS]


@pytest.mark.parametrize("command", [m.NAME for m in COMMANDS])
def test_cli_synopsis_lists_every_option_of_the_command(command):
    line = _synopsis()[command]
    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    missing = [o for o in _options(sub) if not _mentions(line, o)]
    assert missing == [], f"docs/cli.md synopsis: {line!r} lacks {missing}"
