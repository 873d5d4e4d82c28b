"""The reward section a command line selects: which part of it a config error comes from."""

from __future__ import annotations

from pathlib import Path

import pytest

from verl_rewards.cli.reward_section import scorer_from_args
from verl_rewards.errors import ConfigError


def _config(path: Path, *lines: str) -> Path:
    path.write_text("reward:\n" + "".join(f"  {line}\n" for line in lines))
    return path


def _error(config: Path, *overrides: str) -> str:
    with pytest.raises(ConfigError) as raised:
        scorer_from_args(config, overrides)
    return str(raised.value)


def test_an_error_of_the_file_with_no_overrides_is_placed_in_the_file(tmp_path):
    config = _config(tmp_path / "c.yaml", "plugin: exact_mach", "executor: local")
    message = _error(config)
    assert message.startswith("no reward plugin named 'exact_mach' is installed")
    assert message.endswith(f" (in config file {config})")


def test_an_error_of_the_file_beside_other_overrides_is_placed_in_the_file(tmp_path):
    config = _config(tmp_path / "c.yaml", "plugin: exact_mach")
    assert _error(config, "reward.executor=local").endswith(f" (in config file {config})")


def test_an_error_the_overrides_bring_is_placed_in_them(tmp_path):
    config = _config(tmp_path / "c.yaml", "plugin: exact_match")
    assert _error(config, "reward.executor=lcal") == (
        f"reward.executor must be one of ray, local, process; got 'lcal' (did you mean 'local'?) (from the overrides on config file {config})")


def test_an_error_naming_a_path_that_starts_with_the_config_files_is_still_placed(tmp_path):
    config = _config(tmp_path / "grader", f"path: {tmp_path / 'grader.py'}", "executor: local")
    assert _error(config) == (f"reward file not found: {tmp_path / 'grader.py'} (in config file {config})")


@pytest.mark.parametrize(("text", "said"), [
    (None, "config file not found: {config}"),
    ("reward: [1, 2\n", "cannot parse config file {config}: "),
    ("- 1\n- 2\n", "config file {config} must hold a mapping, not a list"),
])
def test_the_files_own_errors_name_it_and_are_not_placed_again(tmp_path, text, said):
    config = tmp_path / "c.yaml"
    if text is not None:
        config.write_text(text)
    message = _error(config, "reward.executor=local")
    assert message.startswith(said.format(config=config))
    assert not message.endswith((f"(in config file {config})", f"(from the overrides on config file {config})"))
