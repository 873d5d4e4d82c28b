"""trainer.settings: YAML + dotlist -> frozen records; unknown keys are errors outside `reward`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from trainer.settings import (
    DEFAULT_CONFIG,
    PROJECT_ROOT,
    TrainConfig,
    TrainerConfigError,
    load_config,
    resolve_path,
)


def test_defaults_load_and_the_yaml_agrees_with_the_schema():
    config = load_config([])
    assert dataclasses.replace(config, reward={}) == TrainConfig()
    assert config.reward["plugin"] == "copy_digits" and config.reward["executor"] == "ray"


def test_overrides_are_typed_and_merged():
    config = load_config(["trainer.total_steps=3", "trainer.output_dir=/tmp/x",
                          "algo.kl_coef=0", "rollout.temperature=0.7"])
    assert config.trainer.total_steps == 3 and config.trainer.output_dir == "/tmp/x"
    assert config.algo.kl_coef == 0.0 and config.rollout.temperature == 0.7


def test_reward_section_passes_through_untouched_even_unknown_keys():
    config = load_config(["reward.plugin=gsm8k", "reward.kwargs.strict=true",
                          "reward.not_a_key=1"])
    assert config.reward["plugin"] == "gsm8k"
    assert config.reward["kwargs"] == {"strict": True}
    assert config.reward["not_a_key"] == 1  # the reward layer, not the trainer, rejects it


@pytest.mark.parametrize("override, message", [
    ("foo.bar=1", "Key 'foo' not in 'TrainConfig' (at 'foo')"),
    ("trainer.total_stepz=3", "Key 'total_stepz' not in 'LoopConfig'. Did you mean: "
                              "'total_steps'? (at 'trainer.total_stepz')"),
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
])
def test_out_of_range_values_are_errors(override, fragment):
    with pytest.raises(TrainerConfigError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        load_config([override])


def test_missing_config_file_is_a_config_error(tmp_path):
    with pytest.raises(TrainerConfigError, match="cannot read config file"):
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
    assert config.reward["path"] == "my_reward.py" and "plugin" not in config.reward
    assert config.reward["executor"] == "ray"  # the other defaults stay
    both = load_config(["reward.path=f.py", "reward.plugin=gsm8k"])
    assert (both.reward["path"], both.reward["plugin"]) == ("f.py", "gsm8k")  # the reward layer objects
