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


def test_the_identity_key_and_so_the_shared_pools_name_ignore_the_order_of_the_sections_keys():
    from verl_rewards.executors.shared_pool import host_name
    from verl_rewards.spec import identity_key

    one = load_config({"rewards": {"x": {"plugin": "exact_match", "kwargs": {"bonus": 0.5}},
                                   "y": {"plugin": "faulty", "weight": 2}},
                       "worker_resources": {"a": 1, "b": 2}, "share_pool": "cluster"})
    other = load_config({"share_pool": "cluster", "worker_resources": {"b": 2, "a": 1},
                         "rewards": {"y": {"weight": 2, "plugin": "faulty"},
                                     "x": {"kwargs": {"bonus": 0.5}, "plugin": "exact_match"}}})
    key = identity_key(spec_from_config(one), one)
    assert identity_key(spec_from_config(other), other) == key
    assert host_name("cluster", key, "01000000") == (f"verl_rewards_pool_{key}", "verl_rewards")
    assert host_name("job", key, "01000000") == (f"verl_rewards_pool_01000000_{key}", None)


# -- score_identity: what decides a score, read from the config's field roles ------------------

TWO_FUNCTIONS = '''
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    return 1.0


def other(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    return 0.0
'''


def _identity(section: dict):
    from verl_rewards.spec import score_identity

    config = load_config(section)
    return score_identity(spec_from_config(config), config)


@pytest.fixture
def sections(reward_file):
    """A single reward and a composite, and for every config key a variant of one of them."""
    path = str(reward_file(TWO_FUNCTIONS, "two.py"))
    single = {"path": path, "executor": "local"}
    composite = {"rewards": {"a": {"plugin": "exact_match"}, "b": {"path": path, "weight": 0.5}},
                 "route": {"x*": ["a"], "*": ["a", "b"]}, "executor": "local"}
    variants = {
        # role "reward": each changes the identity
        "plugin": {"plugin": "exact_match", "executor": "local"},
        "path": {**single, "path": str(reward_file(TWO_FUNCTIONS + "\n# edited\n", "edited.py"))},
        "name": {**single, "name": "other"},
        "kwargs": {**single, "kwargs": {"strict": True}},
        "timeout_s": {**single, "timeout_s": 7},
        "rewards": {**composite, "rewards": {**composite["rewards"], "b": {"path": path, "weight": 1.0}}},
        "route": {**composite, "route": {"x*": ["b"], "*": ["a", "b"]}},
        # role "outcome": applied by whoever assembles the batch
        "on_error": {**single, "on_error": "skip"},
        "error_score": {**single, "error_score": -1.0},
        # role "run"
        "executor": {**single, "executor": "ray"},
        "num_workers": {**single, "num_workers": 7},
        "max_concurrency": {**single, "max_concurrency": 3},
        "chunk_size": {**single, "chunk_size": 5},
        "max_sample_crashes": {**single, "max_sample_crashes": 4},
        "worker_max_rss_mb": {**single, "worker_max_rss_mb": 512},
        "worker_max_calls": {**single, "worker_max_calls": 10},
        "worker_num_cpus": {**single, "worker_num_cpus": 0.5},
        "worker_num_gpus": {**single, "worker_num_gpus": 1},
        "worker_resources": {**single, "worker_resources": {"judge": 1}},
        "max_batch_size": {**single, "max_batch_size": 8},
        "ray_address": {**single, "ray_address": "10.0.0.1:6379"},
        "remote_url": {**single, "remote_url": "http://10.0.0.5:8000"},
        "ship_package": {**single, "ship_package": True},
        "workers_only": {**single, "workers_only": True},
        "share_pool": {**single, "share_pool": "cluster"},
    }
    return single, composite, variants


def test_every_key_that_decides_a_score_changes_the_identity_and_no_other_does(sections):
    from verl_rewards.config import KEYS, keys_with_role

    single, composite, variants = sections
    assert sorted(variants) == sorted(KEYS)  # a new config key must be given a role, and a case here
    base = {key: _identity(composite if key in ("rewards", "route") else single) for key in variants}
    changed = sorted(key for key, section in variants.items() if _identity(section).key != base[key].key)
    assert changed == sorted(keys_with_role("reward"))


def test_the_identity_names_the_part_that_differs(sections):
    single, composite, variants = sections
    then, now = _identity(composite), _identity(variants["route"])
    assert [p for p in then.parts if then.parts[p] != now.parts[p]] == ["route"]
    then, now = _identity(single), _identity(variants["kwargs"])
    assert [p for p in then.parts if then.parts[p] != now.parts[p]] == ["kwargs"]


def test_routes_written_in_another_order_that_route_alike_keep_the_identity(sections):
    _, composite, _ = sections
    assert _identity({**composite, "route": {"*": ["a", "b"], "x*": ["a"]}}) == _identity(composite)
    globs = {**composite, "route": {"x*": ["a"], "xy*": ["b"]}}
    assert _identity({**composite, "route": {"xy*": ["b"], "x*": ["a"]}}) != _identity(globs)


def test_a_moved_file_or_a_plugin_named_with_its_distribution_keeps_its_identity(reward_file, testkit):
    first = reward_file(TWO_FUNCTIONS, "first.py")
    moved = reward_file(TWO_FUNCTIONS, "moved.py")
    assert _identity({"path": str(first)}) == _identity({"path": str(moved)})
    assert _identity({"plugin": "exact_match"}) == _identity({"plugin": f"{testkit.name}:exact_match"})


# Its objects print alike whatever they hold (a class made here does not pickle: keyed by identity).
_PrintsAlike = type("PrintsAlike", (), {"__init__": lambda self, value: setattr(self, "value", value),
                                        "__repr__": lambda self: "<threshold>"})


def test_the_identity_key_tells_apart_kwargs_that_print_alike():
    from verl_rewards.spec import identity_key

    keys = []
    for value in (1, 2):
        config = load_config({"plugin": "exact_match", "kwargs": {"t": _PrintsAlike(value)}})
        keys.append(identity_key(spec_from_config(config), config))
    assert keys[0] != keys[1]
