"""trainer.settings: YAML + dotlist -> frozen records; unknown keys are errors outside `reward`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

import trainer.settings
from trainer.settings import (
    DEFAULT_CONFIG,
    PROJECT_ROOT,
    TrainConfig,
    TrainerConfigError,
    as_dict,
    load_config,
    resolve_path,
)
from verl_rewards.config import load_config as load_reward_config
from verl_rewards.errors import ConfigError, UnknownConfigKeyError


def test_defaults_load_and_the_yaml_agrees_with_the_schema(monkeypatch):
    monkeypatch.chdir(PROJECT_ROOT)  # data.path is then found as written
    config = load_config([])
    assert dataclasses.replace(config, reward={}) == TrainConfig()
    assert config.reward["plugin"] == "copy_digits" and config.reward["executor"] == "ray"
    assert config.reward_overrides == ()


def test_overrides_are_typed_and_merged():
    config = load_config(["trainer.total_steps=3", "trainer.output_dir=/tmp/x",
                          "algo.kl_coef=0", "rollout.temperature=0.7"])
    assert config.trainer.total_steps == 3 and config.trainer.output_dir == "/tmp/x"
    assert config.algo.kl_coef == 0.0 and config.rollout.temperature == 0.7


def test_reward_section_and_overrides_pass_through_untouched_even_unknown_keys(tmp_path):
    config_file = tmp_path / "c.yaml"
    config_file.write_text(DEFAULT_CONFIG.read_text() + "  not_a_key: 1\n")  # under reward:
    overrides = ["reward.plugin=gsm8k", "reward.kwargs.strict=true", "reward.not_a_key=2"]
    config = load_config(["trainer.total_steps=3", *overrides], config_file)
    assert config.reward == {**load_config([]).reward, "not_a_key": 1}
    assert config.reward_overrides == tuple(overrides)
    assert config.trainer.total_steps == 3
    with pytest.raises(UnknownConfigKeyError):  # the reward layer, not the trainer, rejects it
        load_reward_config(config.reward, config.reward_overrides)


@pytest.mark.parametrize("override, message", [
    ("foo.bar=1", "unknown key 'foo'. Valid keys: model, data, rollout, algo, trainer, reward."),
    ("trainer.total_stepz=3", "unknown key 'trainer.total_stepz'. Did you mean "
                              "'trainer.total_steps'? Valid keys: trainer.total_steps, "
                              "trainer.output_dir, trainer.seed, trainer.log_every, "
                              "trainer.torch_threads, trainer.save_checkpoint, "
                              "trainer.checkpoint_every, trainer.overwrite, trainer.resume, "
                              "trainer.max_failed_steps."),
    ("trainer.total_steps=abc", "Value 'abc' of type 'str' could not be converted to Integer"
                                " (at 'trainer.total_steps')"),
    ("trainer.total_steps", "override 'trainer.total_steps' is not of the form key=value"),
])
def test_bad_keys_and_values_are_reported_on_one_line(override, message):
    with pytest.raises(TrainerConfigError) as info:
        load_config([override])
    assert str(info.value) == message


@pytest.mark.parametrize("override, fragment", [
    ("trainer.total_steps=0", "trainer.total_steps must be > 0 (got 0)"),
    ("rollout.n=1", "rollout.n must be >= 2"),
    ("model.num_heads=3", "model.hidden_size (64) must be divisible by model.num_heads (3)"),
    ("algo.mini_batches=3", "algo.mini_batches (3) must divide"),
    ("algo.kl_coef=-1", "algo.kl_coef must be >= 0"),
    ("algo.entropy_coef=-0.1", "algo.entropy_coef must be >= 0 (got -0.1)"),
    ("algo.lr_schedule=linear", "algo.lr_schedule must be one of constant, cosine (got 'linear')"),
    ("algo.lr_min_ratio=2", "algo.lr_min_ratio must be in"),
])
def test_out_of_range_values_are_errors(override, fragment):
    with pytest.raises(TrainerConfigError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        load_config([override])


def test_missing_config_file_is_a_config_error(tmp_path):
    with pytest.raises(TrainerConfigError, match="config file not found: .*nope.yaml"):
        load_config([], tmp_path / "nope.yaml")


def test_relative_paths_fall_back_to_the_project_root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_path("examples/data/toy_copy.jsonl") == PROJECT_ROOT / "examples/data/toy_copy.jsonl"
    (tmp_path / "mine.jsonl").write_text("")
    assert resolve_path("mine.jsonl") == Path("mine.jsonl")
    assert resolve_path("absent.jsonl") == Path("absent.jsonl")
    assert DEFAULT_CONFIG.is_file()


def test_choosing_a_reward_on_the_command_line_replaces_the_default_choice():
    config = load_config(["reward.path=my_reward.py"])
    reward = load_reward_config(config.reward, config.reward_overrides)
    assert (reward.path, reward.plugin) == ("my_reward.py", None)
    assert reward.executor == "ray" and reward.num_workers == 1  # the other defaults stay
    both = load_config(["reward.path=f.py", "reward.plugin=gsm8k"])
    with pytest.raises(ConfigError, match="plugin and path given"):  # the reward layer objects
        load_reward_config(both.reward, both.reward_overrides)


def test_data_and_model_paths_are_resolved_once_when_the_config_loads(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = load_config(["model.path=trainer/config"])  # a directory under the project root
    assert config.model.path == str(PROJECT_ROOT / "trainer/config")
    assert config.data.path == str(PROJECT_ROOT / "examples/data/toy_copy.jsonl")
    assert load_config([]).model.path is None


def test_a_checkpoint_relative_to_the_project_root_gives_its_model_and_tokenizer(
    tmp_path, monkeypatch
):
    from trainer.loop import build
    from trainer.model import build_policy
    from trainer.settings import ModelConfig
    from trainer.tokenizer import build_char_tokenizer

    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    elsewhere.mkdir()
    tokenizer = build_char_tokenizer("0123456789:")
    tiny = ModelConfig(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32)
    build_policy(tiny, tokenizer).save_pretrained(root / "ckpt")
    tokenizer.save_pretrained(root / "ckpt")
    monkeypatch.setattr(trainer.settings, "PROJECT_ROOT", root)
    monkeypatch.chdir(elsewhere)  # "ckpt" is only found from the (patched) project root
    config = load_config(["model.path=ckpt", "algo.kl_coef=0"])
    policy = build(config, prompts=[])
    assert config.model.path == str(root / "ckpt")
    assert len(policy.tokenizer) == len(tokenizer)
    assert policy.model.config.hidden_size == 16


def test_the_written_config_reads_back_as_the_same_config(tmp_path):
    config = load_config(["trainer.total_steps=7", "reward.path=f.py", "reward.kwargs.k=1"])
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(as_dict(config), sort_keys=False))
    assert load_config([], path) == config
