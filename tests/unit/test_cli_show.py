"""`verl-rewards show NAME`: what a plugin is and how it will be called."""

from __future__ import annotations

import json
import sys

import pytest

from verl_rewards.cli.main import main


def _show(capsys, *argv: str) -> dict[str, str]:
    assert main(["show", *argv]) == 0
    fields = {}
    for line in capsys.readouterr().out.splitlines()[1:]:
        key, _, value = line.strip().partition(":")
        if line.startswith("  ") and not line.startswith("    "):
            fields[key] = value.strip()
    return fields


def test_show_a_decorated_sample_function(capsys, testkit):
    fields = _show(capsys, "exact_match")
    assert fields["target"] == "verl_rewards_testkit.shapes:exact_match"
    assert (fields["distribution"], fields["version"]) == (testkit.name, testkit.version)
    assert fields["shape"] == "sample, sync function"
    assert fields["signature"] == (
        "exact_match(data_source: str, solution_str: str, ground_truth: Any, "
        "extra_info: Any = None, bonus: float = 0.0) -> dict[str, typing.Any]")
    assert fields["source"].endswith("verl_rewards_testkit/shapes.py:14")
    assert fields["description"] == "1.0 when the response equals the ground truth after stripping"
    assert fields["examples"] == "2"


def test_show_prints_docstring_and_examples(capsys, testkit):
    assert main(["show", "exact_match"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"exact_match ({testkit.label})\n")
    assert "  docstring:\n    Exact match, with the worker's pid in extra info.\n" in out
    assert "    1. solution_str=' 42 ', ground_truth='42' -> 1.0\n" in out
    assert "    2. solution_str='41', ground_truth='42' -> 0.0\n" in out


@pytest.mark.parametrize(("name", "shape"), [
    ("batch_exact", "batch, sync function"),
    ("async_exact", "sample, async function"),
    ("stateful", "sample, sync class"),
])
def test_show_classifies_every_shape(capsys, name, shape):
    assert _show(capsys, name)["shape"] == shape


def test_show_a_class_gives_constructor_and_call_signatures(capsys):
    fields = _show(capsys, "stateful")
    assert fields["signature"] == "LockedCounter(scale: float = 1.0) -> None"
    assert fields["call"].startswith("__call__(data_source: str, solution_str: str")
    assert fields["examples"] == "none declared"


def test_show_json(capsys, testkit):
    assert main(["show", f"{testkit.name}:exact_match", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["name"] == "exact_match" and info["distribution"] == testkit.name
    assert info["shape"] == "sample, sync function"
    assert info["examples"][0] == {
        "solution_str": " 42 ", "ground_truth": "42", "expected": 1.0, "data_source": "",
        "extra_info": None, "kwargs": {}, "tolerance": 1e-06, "prompt": None}


def test_unknown_name_exits_2_with_close_matches(capsys):
    assert main(["show", "exact_mach"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(
        "verl-rewards: error: no reward plugin named 'exact_mach' is installed. "
        "Did you mean 'exact_match'")
    assert captured.err.count("\n") == 1


def test_ambiguous_name_exits_2_naming_both_distributions(capsys, make_dist):
    make_dist("twin-one", "1.0", {"twin": "plug_t1:f"}, {"plug_t1.py": "def f(a, b, c): return 1.0\n"})
    make_dist("twin-two", "1.0", {"twin": "plug_t2:f"}, {"plug_t2.py": "def f(a, b, c): return 1.0\n"})
    assert main(["show", "twin"]) == 2
    assert "choose one with 'twin-one:twin' or 'twin-two:twin'" in capsys.readouterr().err
    assert _show(capsys, "twin-two:twin")["target"] == "plug_t2:f"


def test_a_plugin_that_fails_to_import_exits_1_naming_dist_and_missing_module(capsys, broken_dist):
    assert main(["show", "broken"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "broken (broken-rewards 0.2)\n  target:       plug_broken:score\n"
    assert captured.err == (
        "verl-rewards: error: cannot load reward broken (broken-rewards 0.2): importing "
        f"plug_broken failed: it imports 'numpyy_not_installed' (at {broken_dist.parent}/"
        f"plug_broken.py:1), which is not installed in this Python environment ({sys.prefix}); "
        "install 'numpyy_not_installed' here, or correct the name: ModuleNotFoundError: No module "
        "named 'numpyy_not_installed'\n")


def test_show_reads_a_class_reward_without_building_it(make_dist, capsys):
    make_dist("model-show", "1.0", {"heavy_show": "plug_heavy_show:Model"}, {"plug_heavy_show.py": '''
        class Model:
            def __init__(self, path: str = "m", strict: bool = False):
                raise RuntimeError("a model would load here")

            def __call__(self, data_source, solution_str, ground_truth, extra_info=None, prompt=None):
                return 1.0
    '''})
    fields = _show(capsys, "heavy_show")
    assert fields["shape"] == "sample, sync class"
    assert fields["kwargs"] == "path: str, strict: bool" and fields["takes_prompt"] == "True"
    assert fields["call"].startswith("__call__(data_source, solution_str")



def test_show_prints_the_audit_kind_and_the_accepted_findings(capsys):
    fields = _show(capsys, "tolerant")  # tests/fixtures/audit_targets
    assert fields["kind"] == "math"
    assert fields["audit_accept"] == ("the exact reference rounded to 2 places (answers within 0.01 are "
                                      "paid on purpose: the dataset's references are rounded)")
    assert (_show(capsys, "exact_match")["kind"], _show(capsys, "exact_match")["audit_accept"]) == ("-", "-")


def test_show_lists_each_kwargs_type_or_allowed_values(capsys):
    assert _show(capsys, "gsm8k")["kwargs"] == ("method: 'strict' | 'lenient' | 'flexible', format_score: float, "
                                               "score: float, extra: bool")
    assert "language: 'python' | 'py' | " in _show(capsys, "code_exec")["kwargs"]
