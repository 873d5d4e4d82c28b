"""Dotlist overrides: every one starts with `reward.`; a wrong prefix says what was meant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verl_rewards.cli.main import main
from verl_rewards.config import load_config
from verl_rewards.errors import ConfigError


def test_prefixed_overrides_set_nested_keys():
    config = load_config({"plugin": "gsm8k"}, ["reward.kwargs.strict=true", "reward.num_workers=3"])
    assert (config.kwargs, config.num_workers) == ({"strict": True}, 3)


@pytest.mark.parametrize(("override", "meant"), [
    ("plugin=x", "reward.plugin=x"),  # no prefix
    ("kwargs.strict=true", "reward.kwargs.strict=true"),  # no prefix, a nested key
    ("rewrd.plugin=x", "reward.plugin=x"),  # a misspelled section
    ("Reward.timeout_s=5", "reward.timeout_s=5"),
])
def test_an_override_without_the_reward_prefix_says_overrides_start_with_it(override, meant):
    with pytest.raises(ConfigError) as info:
        load_config({"plugin": "gsm8k"}, [override])
    assert str(info.value) == (f"override {override!r}: overrides start with `reward.` "
                               f"(did you mean {meant!r}?)")


def test_an_override_without_a_value_names_the_form():
    with pytest.raises(ConfigError, match=r"override 'reward.plugin' is not of the form reward.KEY=VALUE"):
        load_config({"plugin": "gsm8k"}, ["reward.plugin"])


def test_the_cli_exits_2_on_a_bare_override(tmp_path: Path, capsys):
    rows = tmp_path / "in.jsonl"
    rows.write_text(json.dumps({"data_source": "d", "solution_str": "1", "ground_truth": "1"}) + "\n")
    code = main(["score", "-i", str(rows), "-o", str(tmp_path / "out.jsonl"), "plugin=exact_match"])
    assert code == 2
    assert "overrides start with `reward.` (did you mean 'reward.plugin=exact_match'?)" in \
        capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()
