"""reward.kwargs are checked against the reward's signature where the config is read."""

from __future__ import annotations

import pickle

import pytest

from verl_rewards import Scorer
from verl_rewards.cli.main import main
from verl_rewards.errors import PluginLoadError, RewardKwargsError
from verl_rewards.preflight import preflight, rekeyed
from verl_rewards.reference import RewardRef

REWARD = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, strict=False,
                  *, scale=1.0):
    return float(solution_str == ground_truth) * scale

class Judge:
    def __init__(self, url, weight=1.0):
        self.url = url

    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        return 1.0

def anything(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    return 1.0
"""


def test_an_unknown_kwarg_is_a_config_error_listing_the_accepted_keys(reward_file):
    path = reward_file(REWARD)
    with pytest.raises(RewardKwargsError) as raised:
        Scorer.from_config({"path": str(path), "kwargs": {"foo": 1, "strict": True}})
    assert str(raised.value) == (
        f"reward.kwargs 'foo' not accepted by reward compute_score (file {path}, sha256 "
        f"{RewardRef.from_file(path).short_hash}); it accepts: strict, scale")


def test_a_class_reward_is_checked_against_its_constructor_without_building_it(reward_file):
    path = reward_file(REWARD)
    preflight(RewardRef.from_file(path, "Judge", {"url": "http://x"}))
    with pytest.raises(RewardKwargsError, match="'urll' not accepted .* it accepts: url, weight"):
        preflight(RewardRef.from_file(path, "Judge", {"urll": "http://x"}))


def test_a_reward_taking_var_kwargs_accepts_any_key(reward_file):
    preflight(RewardRef.from_file(reward_file(REWARD), "anything", {"whatever": 1}))


def test_a_composite_names_the_component_whose_kwargs_are_wrong(reward_file):
    path = reward_file(REWARD)
    rewards = {"a": {"path": str(path), "weight": 1.0},
               "b": {"path": str(path), "weight": 1.0, "kwargs": {"nope": 1}}}
    with pytest.raises(RewardKwargsError, match=r"^reward.rewards.b.kwargs 'nope' not accepted"):
        Scorer.from_config({"rewards": rewards})


@pytest.mark.parametrize("component", ["b", "my judge", "v1.kwargs"])
def test_a_kwargs_error_is_named_again_from_its_fields_whatever_the_component_is_called(reward_file,
                                                                                       component):
    path = reward_file(REWARD)
    rewards = {"a": {"path": str(path)}, component: {"path": str(path), "kwargs": {"nope": 1}}}
    with pytest.raises(RewardKwargsError) as raised:
        Scorer.from_config({"rewards": rewards})
    error = raised.value
    assert (error.key, error.component) == (f"reward.rewards.{component}.kwargs", component)
    assert str(error) == f"reward.rewards.{component}.kwargs{error.detail}"
    again = rekeyed(pickle.loads(pickle.dumps(error)), lambda name: f"rewards[{name!r}].kwargs")
    assert str(again) == f"rewards[{component!r}].kwargs 'nope' not accepted by reward compute_score " \
                         f"{error.detail.partition(' compute_score ')[2]}"
    assert (type(again), again.component) == (RewardKwargsError, component)


def test_a_plugin_that_raises_on_import_fails_before_any_worker(make_dist):
    make_dist("raising-rewards", "0.1", {"raising": "plug_raising:f"},
              {"plug_raising.py": "raise RuntimeError('no API key at import')\n"})
    with pytest.raises(PluginLoadError, match="importing plug_raising failed: RuntimeError: "
                                              "no API key at import"):
        Scorer.from_config({"plugin": "raising", "executor": "ray"})


def test_a_plugin_that_does_not_import_here_fails_before_ray_starts_naming_the_driver(broken_dist):
    import ray

    began_initialized = ray.is_initialized()
    with pytest.raises(PluginLoadError) as raised:
        Scorer.from_config({"plugin": "broken", "executor": "ray"})
    message = str(raised.value)
    assert "No module named 'numpyy_not_installed' (in the driver, before any Ray worker started" in message
    assert "reward.workers_only=true" in message and "worker node" not in message
    assert ray.is_initialized() == began_initialized  # nothing started


@pytest.mark.parametrize("flag", ["workers_only", "ship_package"])
def test_a_plugin_whose_dependency_only_the_workers_have_is_left_to_them_when_the_config_says_so(
        broken_dist, flag):
    scorer = Scorer.from_config({"plugin": "broken", "executor": "ray", flag: True})
    assert scorer.ref.name == "broken" and not scorer.info.inspected and scorer.info.takes_prompt


def test_kwargs_values_are_checked_against_simple_annotations_and_defaults(reward_file):
    path = reward_file(REWARD)
    with pytest.raises(RewardKwargsError, match=r"'strict' must be bool, not 'yes' \(str\); "
                                                r"'scale' must be float, not True \(bool\)"):
        Scorer.from_config({"path": str(path), "kwargs": {"strict": "yes", "scale": True}})
    scorer = Scorer.from_config({"path": str(path), "kwargs": {"strict": True, "scale": 2}})
    assert scorer.info.kwarg_types == {"strict": "bool", "scale": "float"}


def test_the_cli_exits_2_once_with_the_accepted_keys_before_ray_starts(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text('{"data_source": "d", "solution_str": "1", "ground_truth": "1"}\n')
    code = main(["score", "-i", str(source), "-o", str(tmp_path / "out.jsonl"),
                 "reward.plugin=exact_match", "reward.kwargs.foo=1"])  # executor: ray
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("verl-rewards: error: reward.kwargs 'foo' not accepted by reward "
                          "exact_match (verl-rewards-testkit ")
    assert err.count("not accepted") == 1 and "it accepts: " in err
    assert not (tmp_path / "out.jsonl").exists()


def test_a_reward_of_the_wrong_shape_fails_in_the_driver_without_an_install_hint(make_dist):
    from verl_rewards.errors import PluginShapeError

    make_dist("shapeless-here", "0.1", {"shapeless_here": "plug_shapeless_here:NOT_CALLABLE"},
              {"plug_shapeless_here.py": "NOT_CALLABLE = 42\n"})
    with pytest.raises(PluginShapeError) as raised:
        Scorer.from_config({"plugin": "shapeless_here", "executor": "ray"})
    assert str(raised.value) == ("cannot load reward shapeless_here (shapeless-here 0.1): "
                                 "target is a int, not a function or class")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "strickt"}, "reward.kwargs of reward gsm8k (verl-rewards-math 0.1.0): 'method' must be one of "
                            "'strict', 'lenient', 'flexible', not 'strickt' (did you mean 'strict'?)"),
    ({"methd": "strict"}, "reward.kwargs 'methd' not accepted by reward gsm8k (verl-rewards-math 0.1.0); it "
                          "accepts: method, format_score, score, extra (did you mean 'method'?)"),
])
def test_a_value_a_literal_does_not_allow_or_a_misspelt_name_exits_2_before_any_worker(tmp_path, capsys,
                                                                                      kwargs, message):
    (source := tmp_path / "in.jsonl").write_text('{"data_source": "d", "solution_str": "#### 1", '
                                                 '"ground_truth": "1"}\n')
    key, value = next(iter(kwargs.items()))
    # The Ray executor (the default) would start workers: the config error comes first.
    assert main(["score", "-i", str(source), "-o", str(tmp_path / "o.jsonl"), "reward.plugin=gsm8k",
                 f"reward.kwargs.{key}={value}"]) == 2
    assert capsys.readouterr().err == f"verl-rewards: error: {message}\n"
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize(("plugin", "key", "value"), [("code_exec", "language", "go"), ("ifeval", "mode", "loos")])
def test_the_catalogs_choice_kwargs_are_checked_when_the_config_is_read(plugin, key, value):
    with pytest.raises(RewardKwargsError, match=f"'{key}' must be one of .*, not '{value}'"):
        Scorer.from_config({"plugin": plugin, "kwargs": {key: value}})


def test_several_misspelt_names_each_get_their_close_match(reward_file):
    path = reward_file(REWARD)
    with pytest.raises(RewardKwargsError, match=r"\(did you mean 'scale' for 'scael', 'strict' for 'strcit'\?\)$"):
        preflight(RewardRef.from_file(path, kwargs={"strcit": True, "scael": 2.0, "zzz": 1}))
