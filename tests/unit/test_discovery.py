from __future__ import annotations

import importlib.metadata
import sys

import pytest

from verl_rewards.discovery import PluginRecord, find_plugins, select
from verl_rewards.errors import AmbiguousPluginError, PluginNotFoundError


def test_finds_entry_points_as_records_sorted(make_dist):
    make_dist("acme-rewards", "1.2.0", {"zeta": "acme.z:f", "alpha": "acme.a:g"})
    found = [r for r in find_plugins() if r.dist == "acme-rewards"]
    assert found == [
        PluginRecord("alpha", "acme.a:g", "acme-rewards", "1.2.0"),
        PluginRecord("zeta", "acme.z:f", "acme-rewards", "1.2.0"),
    ]


def test_discovery_imports_nothing(make_dist):
    make_dist("boom-rewards", "0.1", {"boom": "plug_boom:f"},
              {"plug_boom.py": "raise RuntimeError('imported!')\n"})
    records = [r for r in find_plugins() if r.dist == "boom-rewards"]
    assert records == [PluginRecord("boom", "plug_boom:f", "boom-rewards", "0.1")]
    assert "plug_boom" not in sys.modules


def test_ignores_other_entry_point_groups(make_dist):
    make_dist("cli-tool", "1.0", "[console_scripts]\ncli = x:main\n")
    assert not [r for r in find_plugins() if r.dist == "cli-tool"]


def test_same_distribution_twice_on_path_is_listed_once(make_dist, tmp_path, monkeypatch):
    make_dist("twice", "2.0", {"dup": "t:f"})
    other = tmp_path / "other-site"
    other.mkdir()
    make_dist("twice", "2.0", {"dup": "t:f"}, where=other)
    monkeypatch.syspath_prepend(str(other))
    assert len(list(importlib.metadata.distributions(name="twice"))) == 2  # both are visible
    assert [r.name for r in find_plugins() if r.dist == "twice"] == ["dup"]


def test_display_name_names_plugin_distribution_and_version():
    record = PluginRecord("gsm8k", "m:f", "verl-rewards-math", "0.1.0")
    assert record.display_name == "gsm8k (verl-rewards-math 0.1.0)"
    assert record.qualified_name == "verl-rewards-math:gsm8k"


def test_ambiguous_bare_name_lists_both_distributions(make_dist):
    make_dist("first-dist", "1.0", {"same": "a:f"})
    make_dist("second-dist", "1.0", {"same": "b:f"})
    with pytest.raises(AmbiguousPluginError) as info:
        select("same")
    message = str(info.value)
    assert "first-dist" in message and "second-dist" in message
    assert "'first-dist:same'" in message


def test_dist_colon_name_selects_one_of_duplicates(make_dist):
    make_dist("first-dist", "1.0", {"same": "a:f"})
    make_dist("second-dist", "1.0", {"same": "b:f"})
    assert select("second-dist:same").target == "b:f"
    assert select("second_dist:same").target == "b:f"  # normalised distribution names


def test_unknown_plugin_suggests_close_match_and_lists_installed(make_dist):
    make_dist("acme-rewards", "1.0", {"gsm8k_strict": "acme:f"})
    with pytest.raises(PluginNotFoundError) as info:
        select("gsm8k_strikt")
    assert info.value.suggestions[0] == "gsm8k_strict"
    assert "Did you mean 'gsm8k_strict'" in str(info.value)
    assert "gsm8k_strict (acme-rewards 1.0)" in str(info.value)


def test_unknown_distribution_in_qualified_name_is_not_found(make_dist):
    make_dist("acme-rewards", "1.0", {"judge": "acme:f"})
    with pytest.raises(PluginNotFoundError, match="nope:judge"):
        select("nope:judge")


def test_broken_plugin_is_still_listed(make_dist):
    make_dist("broken-rewards", "0.0.1", {"broken": "does_not_exist.mod:f"})
    assert PluginRecord("broken", "does_not_exist.mod:f", "broken-rewards", "0.0.1") in find_plugins()
