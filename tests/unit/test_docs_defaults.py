"""A plugin README's kwarg defaults are the code's: each table row `| `kwarg` | `default` |`
and each "`kwarg`, default N" or "`kwarg` (default N)" in its prose names the default the
plugin's own signature gives (a README that says 30 s in one place and 60 s in another fails)."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*`([^`]+)`\s*\|", re.M)
PROSE = re.compile(r"`(\w+)`(?:, default | \(default )(-?[\d.]+)")

pytestmark = pytest.mark.docs


def _defaults(plugin_dir: Path) -> dict[str, set[object]]:
    """Each kwarg of the distribution's entry points -> the defaults its signatures give."""
    project = tomllib.loads((plugin_dir / "pyproject.toml").read_text())["project"]
    found: dict[str, set[object]] = {}
    for target in project.get("entry-points", {}).get("verl_rewards", {}).values():
        module, _, attr = target.partition(":")
        obj = getattr(importlib.import_module(module), attr)
        signature = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
        for param in signature.parameters.values():
            if param.default is not param.empty:
                found.setdefault(param.name, set()).add(param.default)
    return found


def _said(readme: str) -> list[tuple[str, object]]:
    said: list[tuple[str, object]] = []
    for name, text in ROW.findall(readme):
        try:
            said.append((name, ast.literal_eval(text.replace("true", "True").replace("false", "False")
                                                .replace("null", "None"))))
        except (ValueError, SyntaxError):
            continue  # not a literal (a module path, a description)
    said += [(name, float(number)) for name, number in PROSE.findall(readme)]
    return said


@pytest.mark.parametrize("plugin_dir", sorted(p.parent for p in ROOT.glob("plugins/*/README.md")),
                         ids=lambda p: p.name)
def test_every_default_a_plugin_readme_names_is_the_codes(plugin_dir):
    defaults = _defaults(plugin_dir)
    said = _said((plugin_dir / "README.md").read_text())
    wrong = [(name, value, sorted(map(repr, defaults[name]))) for name, value in said
             if name in defaults and not any(_same(value, d) for d in defaults[name])]
    assert wrong == []


def _same(said: object, default: object) -> bool:
    if default is None and said in ({}, []):  # "none given" written as the empty value it means
        return True
    return said == default and type(said) in (type(default), float)


def test_a_contradicting_default_is_found():
    assert _said("| `compile_timeout_s` | `30.0` | x |\n(`compile_timeout_s`, default 60 s)") == [
        ("compile_timeout_s", 30.0), ("compile_timeout_s", 60.0)]
