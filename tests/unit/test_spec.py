from __future__ import annotations

import pickle

import pytest

from verl_rewards import RewardError, Scorer
from verl_rewards.config import load_config
from verl_rewards.errors import ConfigError, PluginNotFoundError
from verl_rewards.spec import CompositeRef, spec_from_config

FORMAT = '''
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "format_crash":
        raise ValueError("format checker broke")
    return {"score": float(solution_str.startswith("<")), "tagged": solution_str.startswith("<")}
'''


@pytest.fixture
def format_file(reward_file):
    return str(reward_file(FORMAT, "format_reward.py"))


def _row(data_source: str, text: str, truth: str = "1") -> dict:
    return {"data_source": data_source, "solution_str": text, "ground_truth": truth}


def _cfg(format_file: str, **extra) -> dict:
    return {"executor": "local", "rewards": {
        "correct": {"plugin": "faulty", "weight": 1.0},
        "format": {"path": format_file, "weight": 0.5},
    }, **extra}


def test_total_is_the_weighted_sum_and_components_appear_in_extra_info(format_file):
    with Scorer.from_config(_cfg(format_file)) as scorer:
        result = scorer.score([_row("a", "1"), _row("a", "<1"), _row("a", "0")])
    assert result.scores == [1.0, 0.5, 0.0]
    assert result.extra_info["correct"] == [1.0, 0.0, 0.0]
    assert result.extra_info["format"] == [0.0, 1.0, 0.0]
    assert result.extra_info["format/tagged"] == [False, True, False]
    assert result.provenance.kind == "composite"
    assert [key for key, _, _ in result.provenance.components] == ["correct", "format"]


def test_weight_zero_component_is_logged_but_does_not_count_or_fail(format_file):
    cfg = _cfg(format_file)
    cfg["rewards"]["format"]["weight"] = 0
    with Scorer.from_config(cfg) as scorer:
        result = scorer.score([_row("a", "<x"), _row("a", "format_crash")])
    assert result.scores == [0.0, 0.0]
    assert result.extra_info["format"] == [1.0, None]
    assert result.statuses == ["ok", "ok"]


def test_failed_weighted_component_fails_the_sample_naming_the_component(format_file):
    with Scorer.from_config(_cfg(format_file)) as scorer:
        result = scorer.score([_row("a", "1"), _row("a", "nan")])
    assert result.statuses == ["ok", "failed"]
    assert result.errors[1].startswith("[correct] RewardValueError: reward faulty (verl-rewards-testkit 0.3.1)")
    assert "sample 1" in result.errors[1]


def test_routes_pick_components_by_exact_name_then_glob_then_default(format_file):
    cfg = _cfg(format_file, route={"openai/gsm8k": ["correct", "format"], "math/*": "correct",
                                   "*": "format"})
    with Scorer.from_config(cfg) as scorer:
        result = scorer.score([_row("openai/gsm8k", "<1"), _row("math/algebra", "1"),
                               _row("chat", "<hello")])
    assert result.scores == [0.5, 1.0, 0.5]  # format weighs 0.5
    assert result.extra_info["correct"] == [0.0, 1.0, None]
    assert result.extra_info["format"] == [1.0, None, 1.0]


def test_unrouted_data_source_without_default_is_a_failed_sample_naming_it(format_file):
    cfg = _cfg(format_file, route={"openai/gsm8k": "correct"})
    with Scorer.from_config(cfg) as scorer:
        result = scorer.score([_row("openai/gsm8k", "1"), _row("unknown/source", "1")])
    assert result.statuses == ["ok", "failed"]
    assert "no reward is routed for data_source 'unknown/source'" in result.errors[1]


def test_on_error_raise_names_the_composite_and_sample(format_file):
    with Scorer.from_config(_cfg(format_file, on_error="raise")) as scorer:
        with pytest.raises(RewardError, match=r"composite\(correct=faulty .* failed on sample 1"):
            scorer.score([_row("a", "1"), _row("a", "raise")])


def test_composite_reference_is_small_and_picklable(format_file):
    spec = spec_from_config(load_config(_cfg(format_file)))
    assert isinstance(spec, CompositeRef)
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert spec.keys_for("anything") == ("correct", "format")


@pytest.mark.parametrize(
    ("change", "error", "needle"),
    [
        ({"route": {"a": "corect"}}, ConfigError, "unknown reward 'corect'. Did you mean 'correct'"),
        ({"route": {"a": ["correct", "correct"]}}, ConfigError, "names a reward twice"),
        ({"route": {"a": []}}, ConfigError, "names no reward"),
        ({"rewards": {"x": {"plugin": "faulty", "weight": "heavy"}}}, ConfigError,
         "reward.rewards.x.weight must be a finite number"),
        ({"rewards": {"x": {"plugin": "faulty", "wieght": 1}}}, ConfigError, "Did you mean 'weight'"),
        ({"rewards": {"x": {"weight": 1}}}, ConfigError, "exactly one of plugin or path"),
        ({"rewards": {}}, ConfigError, "non-empty mapping"),
        ({"plugin": "faulty"}, ConfigError, "plugin and rewards given"),
        ({"kwargs": {"a": 1}}, ConfigError, "set kwargs per reward"),
        ({"rewards": {"x": {"plugin": "no_such_plugin_zzz"}}}, PluginNotFoundError, "no_such_plugin_zzz"),
    ],
)
def test_composite_config_errors_name_the_fault(format_file, change, error, needle):
    cfg = {**_cfg(format_file), **change}
    with pytest.raises(error, match=needle):
        Scorer.from_config(cfg)


def test_route_without_rewards_is_an_error():
    with pytest.raises(ConfigError, match="reward.route needs reward.rewards"):
        load_config({"plugin": "faulty", "route": {"a": "b"}})


def test_dotlist_overrides_reach_components(format_file):
    config = load_config(_cfg(format_file), ["reward.rewards.format.weight=0.25"])
    assert [c.weight for c in config.components] == [1.0, 0.25]


@pytest.mark.timeout(30)
def test_a_data_source_that_is_not_a_string_is_routed_by_its_text_and_fails_only_itself(format_file):
    cfg = _cfg(format_file, route={"a": ["correct", "format"], "['x', 'y']": "format"})
    rows = [_row("a", "1"), {**_row("a", "1"), "data_source": ["x", "y"]},
            {**_row("a", "<1"), "data_source": ["q"]}, _row("a", "<1")]
    with Scorer.from_config(cfg) as scorer:
        result = scorer.score(rows)
    assert result.scores == [1.0, 0.0, 0.0, 0.5]
    assert result.errors[:2] == [None, None]  # the list's text matched its route
    assert result.errors[2].startswith("RoutingError: no reward is routed for data_source ['q']")
    assert result.errors[3] is None


def test_the_identity_key_changes_with_the_config_and_the_kwargs_and_is_stable(format_file):
    from verl_rewards.spec import identity_key

    base = load_config({"path": str(format_file), "executor": "local"})
    key = identity_key(spec_from_config(base), base)
    assert key == identity_key(spec_from_config(base), load_config(base.as_section()))
    other = load_config({"path": str(format_file), "executor": "local", "timeout_s": 3})
    assert identity_key(spec_from_config(other), other) != key
    assert Scorer.from_config(base).key == key and len(key) == 16
