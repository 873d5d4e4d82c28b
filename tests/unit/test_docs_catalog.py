"""docs/catalog.md lists exactly the first-party plugins, and its examples are theirs.

The first-party plugins are the entry points that `verl-rewards list` shows from the
distributions under plugins/ and examples/toy_plugin/. When a test here fails after a
plugin was added, renamed or its examples changed, update docs/catalog.md (the failure
says what is missing and what is extra).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from verl_rewards import Sample, Scorer
from verl_rewards.discovery import find_plugins

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "docs" / "catalog.md"
PROJECTS = [*sorted(ROOT.glob("plugins/*/pyproject.toml")), ROOT / "examples" / "toy_plugin" / "pyproject.toml"]

pytestmark = pytest.mark.docs


def _distribution(pyproject: Path) -> str:
    project = pyproject.read_text().split("[project]\n", 1)[1]
    match = re.search(r'^name\s*=\s*"([^"]+)"', project, flags=re.M)
    assert match, pyproject
    return match.group(1)


def _first_party() -> dict[str, str]:
    """``{entry point: distribution}`` of every first-party plugin installed here."""
    distributions = {_distribution(p): p.parent.relative_to(ROOT).as_posix() for p in PROJECTS}
    plugins = {r.name: r.dist for r in find_plugins() if r.dist in distributions}
    uninstalled = sorted(set(distributions) - set(plugins.values()))
    assert uninstalled == [], f"not installed (bash scripts/install.sh): {uninstalled}"
    return plugins


def _sections() -> dict[str, str]:
    """``{name: text}`` of each ``### `name``` section of the catalog."""
    text = CATALOG.read_text()
    parts = re.split(r"^### `(\w+)`\n", text, flags=re.M)
    return {name: re.split(r"^## ", body, flags=re.M)[0] for name, body in zip(parts[1::2], parts[2::2])}


def _index() -> dict[str, str]:
    """``{entry point: distribution}`` from the catalog's index table."""
    rows = re.findall(r"^\| \[`(\w+)`\]\(#(\w+)\) \| `([\w-]+)` \|", CATALOG.read_text(), flags=re.M)
    assert all(name == anchor for name, anchor, _ in rows), rows
    return {name: dist for name, _, dist in rows}


def _example(name: str, section: str) -> tuple[dict[str, Any], dict[str, Any], float]:
    """The section's example: (its row, its kwargs, the score it states)."""
    match = re.search(r"^Example[^\n]*?(?:, with kwargs `(\{.*?\})`)?, scoring (-?[0-9.]+):\n\n```json\n(.*?)\n```",
                      section, flags=re.M | re.S)
    assert match, f"docs/catalog.md: the {name} section has no 'Example ..., scoring X:' and json block"
    kwargs, score, row = match.groups()
    return json.loads(row), json.loads(kwargs or "{}"), float(score)


def _as_json(sample: Sample, kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An example as the catalog writes it: a `score` input row (no null extra_info) and its kwargs."""
    row = {"data_source": sample.data_source, "solution_str": sample.solution_str,
           "ground_truth": sample.ground_truth, "extra_info": sample.extra_info}
    if row["extra_info"] is None:
        del row["extra_info"]
    return json.loads(json.dumps(row, default=dict)), json.loads(json.dumps(kwargs, default=dict))


def test_the_catalog_has_a_section_for_every_first_party_plugin_and_no_other():
    first_party = set(_first_party())
    sections = set(_sections())
    assert sorted(first_party - sections) == [], "missing from docs/catalog.md"
    assert sorted(sections - first_party) == [], "in docs/catalog.md but not installed from plugins/"


def test_the_catalog_index_names_every_first_party_plugin_with_its_distribution():
    assert _index() == _first_party()


@pytest.mark.parametrize("name", sorted(_sections()))
def test_each_catalog_example_is_one_of_the_plugins_own_self_test_examples(name):
    row, kwargs, stated = _example(name, _sections()[name])
    examples = Scorer.from_config({"plugin": name, "executor": "local"}).info.meta.examples
    same = [e for e in examples if _as_json(e.as_sample(), e.kwargs) == (row, kwargs)]
    assert same, f"docs/catalog.md: the {name} example is none of its @reward examples (verl-rewards show {name})"
    decimals = len(str(stated).partition(".")[2])
    assert round(same[0].expected, decimals) == stated, (same[0].expected, stated)
