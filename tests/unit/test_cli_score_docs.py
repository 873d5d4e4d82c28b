"""docs/cli.md and `score --help` say what `score` takes: every option, the optional
`prompt` column, examples that run on a demo install (no test plugins)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import tomllib

from verl_rewards.cli import cmd_score

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def _options() -> list[str]:
    parser = argparse.ArgumentParser()
    cmd_score.configure(parser)
    return sorted(o for action in parser._actions for o in action.option_strings
                  if o.startswith("--") and o != "--help")


def _score_section() -> str:
    return DOC[DOC.index("## `score`"):DOC.index("## `new NAME")]


def test_the_synopsis_lists_every_score_option():
    (synopsis,) = [line for line in DOC.splitlines() if line.startswith("verl-rewards score ")]
    assert [o for o in _options() if o not in synopsis] == []


def test_the_score_section_documents_every_option_and_the_prompt_column():
    section = _score_section()
    assert [o for o in _options() if f"`{o}" not in section] == []
    assert "`prompt`" in section and "`status`" in section


def _demo_plugins() -> set[str]:
    """Entry points of what `scripts/install.sh` (without --test) installs."""
    names: set[str] = set()
    for pyproject in [*ROOT.glob("plugins/*/pyproject.toml"),
                      ROOT / "examples" / "toy_plugin" / "pyproject.toml"]:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        names.update(project.get("entry-points", {}).get("verl_rewards", {}))
    return names


def test_help_examples_use_plugins_a_demo_install_has():
    used = set(re.findall(r"reward\.plugin=(\w+)", cmd_score.EPILOG))
    assert used and used <= _demo_plugins(), used - _demo_plugins()
