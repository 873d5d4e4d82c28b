from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from verl_rewards.config import RewardConfig, load_config
from verl_rewards.errors import ConfigError, ConfigValueError, UnknownConfigKeyError


def test_defaults_match_the_documented_reward_section():
    cfg = load_config({"plugin": "gsm8k"})
    assert cfg == RewardConfig(plugin="gsm8k")
    assert (cfg.name, cfg.executor, cfg.num_workers, cfg.timeout_s, cfg.on_error, cfg.error_score) == (
        "compute_score", "ray", 2, "auto", "score", 0.0)


def test_dotlist_overrides():  # without the reward. prefix: tests/unit/test_config_overrides.py
    cfg = load_config(None, ["reward.plugin=gsm8k", "reward.kwargs.strict=true", "reward.timeout_s=5"])
    assert cfg.plugin == "gsm8k"
    assert cfg.kwargs == {"strict": True}
    assert cfg.timeout_s == 5


def test_omegaconf_node_and_yaml_file(tmp_path):
    node = OmegaConf.create({"plugin": "gsm8k", "kwargs": {"method": "flexible"}})
    assert load_config(node).kwargs == {"method": "flexible"}
    path = tmp_path / "train.yaml"
    path.write_text("model: {hidden: 8}\nreward:\n  plugin: gsm8k\n  executor: local\n")
    assert load_config(path).executor == "local"


def test_config_is_frozen():
    cfg = load_config({"plugin": "gsm8k"})
    with pytest.raises(AttributeError):
        cfg.plugin = "other"  # type: ignore[misc]


def test_unknown_key_suggests_the_closest_valid_key():
    with pytest.raises(UnknownConfigKeyError) as info:
        load_config({"plugin": "gsm8k", "timeout": 3})
    assert info.value.key == "timeout"
    assert "Did you mean 'timeout_s'" in str(info.value)


def test_both_plugin_and_path_is_an_error():
    with pytest.raises(ConfigError, match="exactly one of reward.plugin .* plugin and path given"):
        load_config({"plugin": "gsm8k", "path": "r.py"})


def test_neither_plugin_nor_path_is_an_error():
    with pytest.raises(ConfigError, match="neither given"):
        load_config({})


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("executor", "dask", "reward.executor must be one of ray, local"),
        ("on_error", "ignore", "reward.on_error must be one of score, raise, skip"),
        ("num_workers", 0, "reward.num_workers must be an integer >= 1"),
        ("num_workers", "2", "reward.num_workers must be an integer >= 1"),
        ("timeout_s", -1, "reward.timeout_s must be a positive number"),
        ("error_score", float("nan"), "reward.error_score must be a finite number"),
        ("kwargs", [1, 2], "reward.kwargs must be a mapping"),
        ("ship_package", "yes", "reward.ship_package must be true or false"),
        ("share_pool", "node", "reward.share_pool must be false, job \\(or true: one pool per Ray job\\) "
                               "or cluster \\(one pool per Ray cluster\\), not 'node'"),
    ],
)
def test_bad_values_name_the_key(key, value, needle):
    with pytest.raises(ConfigError, match=needle):
        load_config({"plugin": "gsm8k", key: value})


def test_the_process_executor_is_a_choice_and_a_misspelt_executor_suggests_the_closest():
    assert load_config({"plugin": "gsm8k", "executor": "process"}).executor == "process"
    with pytest.raises(ConfigError, match=r"reward.executor must be one of ray, local, process; "
                                          r"got 'proces' \(did you mean 'process'\?\)"):
        load_config({"plugin": "gsm8k", "executor": "proces"})


def test_malformed_override_is_a_config_error():
    with pytest.raises(ConfigError, match="reward.KEY=VALUE"):
        load_config({"plugin": "gsm8k"}, ["reward.plugin"])


def test_missing_config_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")


def test_malformed_yaml_file_is_a_config_error_naming_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("reward:\n  plugin: [unclosed\n")
    with pytest.raises(ConfigError, match=r"cannot parse config file .*bad.yaml"):
        load_config(path)


def test_broken_interpolation_is_a_config_error(tmp_path):
    path = tmp_path / "reward.yaml"
    path.write_text("plugin: ${nowhere.to.be.found}\n")
    with pytest.raises(ConfigError, match=r"cannot resolve config file .*reward.yaml"):
        load_config(path)


def test_an_override_that_chooses_the_reward_replaces_the_files_choice(tmp_path):
    path = tmp_path / "train.yaml"
    path.write_text("reward:\n  executor: local\n  rewards: {a: {plugin: x}}\n  route: {d: a}\n")
    cfg = load_config(path, ["reward.path=r.py"])
    assert (cfg.path, cfg.plugin, cfg.rewards, cfg.route, cfg.executor) == ("r.py", None, None, None, "local")
    assert load_config({"plugin": "x"}, ["reward.plugin=y"]).plugin == "y"


def test_a_plain_mapping_is_taken_literally_without_interpolation():
    cfg = load_config({"plugin": "judge", "kwargs": {"template": "Q: ${question}"}})
    assert cfg.kwargs == {"template": "Q: ${question}"}


def test_an_override_inside_rewards_keeps_the_composite():
    cfg = load_config({"rewards": {"a": {"plugin": "x"}, "b": {"plugin": "y"}}, "route": {"d": "a"}},
                      ["reward.rewards.b.weight=0.5"])
    assert [c.weight for c in cfg.components] == [1.0, 0.5] and cfg.route == {"d": ("a",)}


def test_plain_values_stay_literal_when_overrides_are_given():
    cfg = load_config({"plugin": "judge", "kwargs": {"template": "Q: ${question}"}},
                      ["reward.kwargs.n=3"])
    assert cfg.kwargs == {"template": "Q: ${question}", "n": 3}


def test_on_error_skip_is_accepted():
    assert load_config({"plugin": "x", "on_error": "skip"}).on_error == "skip"


def test_defaults_fill_only_the_keys_a_section_leaves_unset(tmp_path):
    local = {"executor": "local"}
    assert load_config({"plugin": "p"}, defaults=local).executor == "local"
    assert load_config({"plugin": "p", "executor": "ray"}, defaults=local).executor == "ray"
    path = tmp_path / "reward.yaml"
    path.write_text("reward:\n  plugin: p\n")
    assert load_config(str(path), defaults=local).executor == "local"
    assert load_config(str(path), ["reward.executor=ray"], defaults=local).executor == "ray"


def test_as_section_loads_back_to_the_same_config():
    config = load_config({"rewards": {"a": {"plugin": "p", "weight": 2}}, "route": {"d": "a"},
                          "timeout_s": 5})
    assert load_config(config.as_section()) == config


@pytest.mark.parametrize(("value", "scope"), [(False, False), (True, "job"), ("job", "job"),
                                              ("cluster", "cluster")])
def test_share_pool_true_is_one_pool_per_job_and_cluster_one_per_cluster(value, scope):
    assert load_config({"plugin": "gsm8k", "share_pool": value}).share_pool == scope
    assert load_config({"plugin": "gsm8k"}, [f"reward.share_pool={str(value).lower()}"]).share_pool == scope


def test_every_key_has_one_role_and_the_score_deciding_ones_are_the_documented_ones():
    from verl_rewards.config import KEYS, keys_with_role

    assert keys_with_role("reward") == ("plugin", "path", "name", "kwargs", "timeout_s", "rewards", "route")
    assert keys_with_role("outcome") == ("on_error", "error_score")
    assert sorted(keys_with_role("reward", "outcome", "run")) == sorted(KEYS)
    assert {"remote_url", "share_pool", "workers_only", "executor", "num_workers"} <= set(keys_with_role("run"))


@pytest.mark.parametrize(("key", "value"), [("timeout_s", "soon"), ("on_error", "ignore"),
                                            ("error_score", "high"), ("num_workers", 0), ("name", "")])
def test_a_bad_value_is_a_config_value_error_naming_its_key(key, value):
    with pytest.raises(ConfigValueError) as raised:
        load_config({"plugin": "gsm8k", key: value})
    assert raised.value.key == key and str(raised.value).startswith(f"reward.{key} must be")
