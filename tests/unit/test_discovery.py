from __future__ import annotations

import importlib.metadata
import sys

import pytest

from verl_rewards.discovery import BrokenDistribution, PluginRecord, find_plugins, scan, select
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


def test_unknown_plugin_suggests_close_matches_and_points_at_list(make_dist):
    make_dist("acme-rewards", "1.0", {"gsm8k_strict": "acme:f"})
    with pytest.raises(PluginNotFoundError) as info:
        select("gsm8k_strikt")
    assert info.value.suggestions[0] == "gsm8k_strict"
    message = str(info.value)
    assert message.startswith("no reward plugin named 'gsm8k_strikt' is installed. "
                              "Did you mean 'gsm8k_strict'?")
    assert message.endswith("Run `verl-rewards list` to see every installed plugin.")
    assert "(acme-rewards 1.0)" not in message  # no listing of every installed plugin


def test_unknown_plugin_without_close_match_names_a_few_installed_or_counts_many():
    few = [PluginRecord(n, "m:f", "d", "1") for n in ("alpha", "beta")]
    with pytest.raises(PluginNotFoundError, match=r"Installed: alpha, beta\. Run `verl-rewards list`"):
        select("zzz", few)
    many = [PluginRecord(f"plugin{i}", "m:f", "d", "1") for i in range(20)]
    with pytest.raises(PluginNotFoundError) as info:
        select("zzz", many)
    assert "20 plugins are installed. Run `verl-rewards list`" in str(info.value)
    assert "plugin7" not in str(info.value)


def test_a_dist_info_without_metadata_is_broken_and_never_stops_the_others(make_dist):
    make_dist("good-rewards", "1.0", {"good": "plug_good:f"})
    half = make_dist("half-rewards", "0.3", {"half": "plug_half:f"})
    half.joinpath("METADATA").unlink()  # what an interrupted install leaves
    found = scan()
    assert PluginRecord("good", "plug_good:f", "good-rewards", "1.0") in found.plugins
    assert [p for p in found.plugins if p.name == "half"] == []
    assert BrokenDistribution(str(half), "no METADATA file (an interrupted install?)",
                              ("half",)) in found.broken
    assert select("good").dist == "good-rewards"


def test_a_malformed_entry_points_line_is_broken_and_never_stops_the_others(make_dist):
    make_dist("good-rewards", "1.0", {"good": "plug_good:f"})
    bad = make_dist("mangled-rewards", "1.0", "[verl_rewards]\nfine = plug_m:f\nno equals sign\n")
    found = scan()
    assert [p.name for p in found.plugins if p.dist in ("good-rewards", "mangled-rewards")] == ["good"]
    [broken] = [b for b in found.broken if b.location == str(bad)]
    assert broken.problem.startswith("malformed entry_points.txt (")
    assert broken.names == ("fine",)


def test_undecodable_entry_points_is_broken_not_a_crash(make_dist):
    make_dist("good-rewards", "1.0", {"good": "plug_good:f"})
    bad = make_dist("binary-rewards", "1.0", {"x": "m:f"})
    bad.joinpath("entry_points.txt").write_bytes(b"[verl_rewards]\nx = m:f\n\xff\xfe\n")
    found = scan()
    assert "good" in [p.name for p in found.plugins]
    assert [b.problem.split(":")[0] for b in found.broken if b.location == str(bad)] == [
        "cannot read entry_points.txt"]


def test_selecting_a_plugin_of_a_broken_distribution_says_it_is_broken(make_dist):
    half = make_dist("half-rewards", "0.3", {"half": "plug_half:f"})
    half.joinpath("METADATA").unlink()
    with pytest.raises(PluginNotFoundError) as info:
        select("half")
    assert f"It is declared by a broken distribution {half} (declares half): no METADATA" in str(info.value)
    assert "pip install --force-reinstall" in str(info.value)


def test_unknown_distribution_in_qualified_name_is_not_found(make_dist):
    make_dist("acme-rewards", "1.0", {"judge": "acme:f"})
    with pytest.raises(PluginNotFoundError, match="nope:judge"):
        select("nope:judge")


def test_broken_plugin_is_still_listed(make_dist):
    make_dist("broken-rewards", "0.0.1", {"broken": "does_not_exist.mod:f"})
    assert PluginRecord("broken", "does_not_exist.mod:f", "broken-rewards", "0.0.1") in find_plugins()


def test_score_runs_with_broken_distributions_installed(make_dist, tmp_path, capsys):
    from verl_rewards.cli.main import main

    make_dist("half-rewards", "0.3", {"half": "plug_half:f"}).joinpath("METADATA").unlink()
    make_dist("mangled-rewards", "1.0", "[verl_rewards]\nno equals sign\n")
    rows = tmp_path / "in.jsonl"
    rows.write_text('{"data_source": "d", "solution_str": "42", "ground_truth": "42"}\n')
    out = tmp_path / "out.jsonl"
    assert main(["score", "-i", str(rows), "-o", str(out), "--no-progress",
                 "reward.plugin=exact_match", "reward.executor=local"]) == 0
    assert '"score": 1.0' in out.read_text()


def test_metadata_without_a_version_is_broken(make_dist):
    info = make_dist("noversion-rewards", "1.0", {"nov": "m:f"})
    info.joinpath("METADATA").write_text("Metadata-Version: 2.1\nName: noversion-rewards\n")
    [broken] = [b for b in scan().broken if b.location == str(info)]
    assert broken == BrokenDistribution(str(info), "its METADATA has no Version", ("nov",))
