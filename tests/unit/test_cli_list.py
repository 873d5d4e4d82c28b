"""`verl-rewards list`: every installed plugin, from metadata alone."""

from __future__ import annotations

import json
import subprocess
import sys

from verl_rewards import discovery
from verl_rewards.cli.main import main


def _table(capsys) -> list[list[str]]:
    assert main(["list"]) == 0
    return [line.split() for line in capsys.readouterr().out.splitlines()]


def test_table_lists_name_distribution_version_target(capsys, testkit):
    rows = _table(capsys)
    assert rows[0] == ["NAME", "DISTRIBUTION", "VERSION", "TARGET"]
    dist = [testkit.name, testkit.version]
    assert ["exact_match", *dist, "verl_rewards_testkit.shapes:exact_match"] in rows
    assert ["stateful", *dist, "verl_rewards_testkit.shapes:LockedCounter"] in rows
    names = [r[0] for r in rows if r[1:2] == [testkit.name]]
    assert names == ["async_exact", "batch_exact", "exact_match", "faulty", "leaky", "node_killer",
                     "odd_values", "sleepy", "slow_batch", "slow_cpu", "stateful", "unpicklable_extra"]


def test_json_is_a_list_of_objects(capsys, testkit):
    assert main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"name": "exact_match", "distribution": testkit.name, "version": testkit.version,
            "target": "verl_rewards_testkit.shapes:exact_match",
            "qualified_name": f"{testkit.name}:exact_match"} in listed
    assert [e["name"] for e in listed] == sorted(e["name"] for e in listed)


def test_a_broken_plugin_is_listed_and_not_imported(capsys, broken_dist):
    assert ["broken", "broken-rewards", "0.2", "plug_broken:score"] in _table(capsys)
    assert "plug_broken" not in sys.modules


def test_a_name_declared_twice_is_listed_twice_with_a_note(capsys, make_dist):
    make_dist("dup-one", "1.0", {"twin": "plug_a:f"})
    make_dist("dup-two", "2.0", {"twin": "plug_b:f"})
    assert main(["list"]) == 0
    captured = capsys.readouterr()
    rows = [line.split() for line in captured.out.splitlines()]
    assert ["twin", "dup-one", "1.0", "plug_a:f"] in rows
    assert ["twin", "dup-two", "2.0", "plug_b:f"] in rows
    assert captured.err == ("\nnote: 'twin' is declared by 2 distributions; "
                            "select one as dup-one:twin, dup-two:twin\n")


def test_a_dist_info_without_metadata_is_named_broken_and_the_others_are_listed(capsys, make_dist):
    make_dist("good-rewards", "1.0", {"good": "plug_good:f"})
    half = make_dist("half-rewards", "0.3", {"half": "plug_half:f"})
    half.joinpath("METADATA").unlink()  # what an interrupted install leaves
    assert main(["list"]) == 0
    captured = capsys.readouterr()
    assert ["good", "good-rewards", "1.0", "plug_good:f"] in [r.split() for r in captured.out.splitlines()]
    assert "half" not in captured.out
    assert (f"note: broken distribution {half} (declares half): no METADATA file (an interrupted "
            f"install?); reinstall it (pip install --force-reinstall) or remove that directory\n"
            ) in captured.err
    assert main(["list", "--json"]) == 0
    captured = capsys.readouterr()
    assert "good" in [e["name"] for e in json.loads(captured.out)]
    assert f"broken distribution {half}" in captured.err


def test_no_plugins_says_how_to_make_one(capsys, monkeypatch):
    monkeypatch.setattr(discovery, "scan", lambda: discovery.Scan([], []))
    assert main(["list"]) == 0
    assert "no reward plugins installed" in capsys.readouterr().out
    assert main(["list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_list_imports_no_plugin_nor_ray_torch_omegaconf():
    code = """
import sys
import verl_rewards.__main__  # what `python -m verl_rewards` and the console script load
from verl_rewards import discovery
from verl_rewards.cli.main import main
assert main(['list']) == 0
assert main(['list', '--json']) == 0
heavy = {'ray', 'torch', 'omegaconf', 'yaml', 'pyarrow', 'tqdm', 'numpy'}
plugins = {r.target.split(':')[0].split('.')[0] for r in discovery.find_plugins()}
loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy | plugins)
assert not loaded, loaded
assert not [m for m in sys.modules if m.startswith(('verl_rewards.resolve', 'verl_rewards.scor'))]
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "exact_match" in done.stdout
