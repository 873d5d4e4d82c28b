"""The CLI's shell: help, usage errors, and the one error -> exit code mapping."""

from __future__ import annotations

import re

import pytest

from verl_rewards.cli import cmd_check, cmd_list, cmd_new
from verl_rewards.cli.errors import CheckFailed, InputError, UsageError, exit_code
from verl_rewards.cli.main import COMMANDS, EPILOG, main
from verl_rewards.errors import (
    AmbiguousPluginError,
    ConfigError,
    ExecutorError,
    PluginLoadError,
    PluginNotFoundError,
    PluginNotInstalledError,
    PluginShapeError,
    RewardError,
    RewardValueError,
    SampleError,
    UnknownConfigKeyError,
    VerlRewardsError,
)


def test_top_level_help_lists_every_command_with_an_example_of_each(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    examples = out.split("examples:\n", 1)[1].split("\n\n", 1)[0]
    for command in (m.NAME for m in COMMANDS):
        assert f"    {command} " in out
        assert f"  verl-rewards {command} " in examples or f"  verl-rewards {command}\n" in examples, command
    assert "exit codes: 0 ok, 1 a check or scoring failure, 2 a usage" in out


@pytest.mark.parametrize(("argv", "hint"), [
    (["score", "-i", "a.jsonl", "-o", "b.jsonl", "--plugin", "gsm8k"], "reward.plugin=gsm8k"),
    (["score", "-i", "a.jsonl", "-o", "b.jsonl", "--plugin=gsm8k", "--num-workers", "2"],
     "reward.plugin=gsm8k reward.num_workers=2"),
    (["serve", "--executor", "local"], "reward.executor=local"),
])
def test_a_reward_key_given_as_a_flag_is_refused_with_the_override_it_means(capsys, argv, hint):
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        f"; reward options are overrides, not flags: {hint}")


def test_an_unknown_flag_that_is_no_reward_key_gets_no_hint(capsys):
    assert main(["score", "-i", "a.jsonl", "-o", "b.jsonl", "--frobnicate"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "verl-rewards: error: unrecognized arguments: --frobnicate")


def test_a_close_match_names_each_plugin_once(capsys):
    # `math:gsm8k` is close to both spellings of one plugin: gsm8k and verl-rewards-math:gsm8k.
    assert main(["check", "math:gsm8k"]) == 2
    assert "Did you mean 'verl-rewards-math:gsm8k'? Run" in capsys.readouterr().err
    assert main(["check", "gsm8"]) == 2
    assert "Did you mean 'gsm8k'? Run" in capsys.readouterr().err


@pytest.mark.parametrize("command", [m.NAME for m in COMMANDS])
def test_every_command_has_help_with_an_example(capsys, command):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: verl-rewards {command}")
    assert f"examples:\n  verl-rewards {command}" in out


@pytest.mark.parametrize("module", [cmd_list, cmd_check, cmd_new], ids=lambda m: m.NAME)
def test_subcommand_examples_check_only_plugins_a_demo_install_has_or_that_they_create(module):
    demo = {"copy_digits", "gsm8k", "math_boxed", "think_answer_format", "length_penalty",
            "overlong_penalty", "code_exec", "llm_judge", "hf_reward_model"}
    named = set()
    examples = [line for line in module.EPILOG.splitlines() if line.startswith("  ")]
    for line in examples:
        for command in ("check", "show"):
            if f"verl-rewards {command}" in line:
                words = line.split(f"verl-rewards {command}", 1)[1].split("#")[0].split("&&")[0].split()
                named |= {w.rpartition(":")[2] for w in words if not w.startswith("-")}
    created = {"my_reward"} if module is cmd_new else set()
    assert named <= demo | created, named - demo - created


def test_version(capsys):
    from importlib import metadata

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"verl-rewards {metadata.version('verl-rewards')}\n"


@pytest.mark.parametrize("argv", [["frobnicate"], ["list", "--bogus"], ["show"],
                                  ["score", "--input", "x.jsonl"], ["score", "-i", "a.jsonl",
                                                                    "-o", "b.jsonl",
                                                                    "--batch-size", "0"]])
def test_usage_errors_exit_2_with_argparse_message(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: verl-rewards" in err and "error:" in err


@pytest.mark.parametrize(("error", "code"), [
    (UsageError("x"), 2),
    (InputError("x"), 2),
    (ConfigError("x"), 2),
    (UnknownConfigKeyError("plugn", ["plugin"], ["plugin"]), 2),
    (PluginNotFoundError("x", [], []), 2),
    (AmbiguousPluginError("x", ["a", "b"]), 2),
    (SampleError(3, "missing"), 2),
    (CheckFailed("x"), 1),
    (PluginLoadError("p", "m"), 1),
    (PluginNotInstalledError("p", "m"), 1),
    (PluginShapeError("p", "m"), 1),
    (RewardError("p", 0, "c"), 1),
    (RewardValueError("p", 0, "m"), 1),
    (ExecutorError("x"), 1),
    (VerlRewardsError("x"), 1),
    (RuntimeError("a bug"), 1),
])
def test_one_place_maps_errors_to_exit_codes(error, code):
    assert exit_code(error) == code


def _raising(error: BaseException):
    def run(args):
        raise error

    return run


def test_a_library_error_is_one_line_without_traceback(capsys, monkeypatch):
    monkeypatch.setattr(cmd_list, "run", _raising(ConfigError("reward.executor must be one of ray, local")))
    assert main(["list"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "verl-rewards: error: reward.executor must be one of ray, local\n"
    assert captured.out == ""


@pytest.mark.parametrize("argv", [["--verbose", "list"], ["list", "--verbose"], ["list", "-v"]])
def test_verbose_adds_the_traceback_before_or_after_the_command(capsys, monkeypatch, argv):
    monkeypatch.setattr(cmd_list, "run", _raising(ConfigError("bad config")))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.endswith("verl-rewards: error: bad config\n")


def test_an_unexpected_error_exits_1_and_points_at_verbose(capsys, monkeypatch):
    monkeypatch.setattr(cmd_list, "run", _raising(RuntimeError("a bug")))
    assert main(["list"]) == 1
    assert capsys.readouterr().err == (
        "verl-rewards: error: RuntimeError: a bug (run with --verbose for the traceback)\n")


def test_interrupt_exits_130(capsys, monkeypatch):
    monkeypatch.setattr(cmd_list, "run", _raising(KeyboardInterrupt()))
    assert main(["list"]) == 130
    assert capsys.readouterr().err == "verl-rewards: interrupted\n"


def test_help_examples_name_only_plugins_a_demo_install_has(capsys):
    from verl_rewards.cli import cmd_show

    demo = {"copy_digits", "gsm8k", "math_boxed", "think_answer_format", "length_penalty",
            "overlong_penalty", "code_exec", "llm_judge", "hf_reward_model"}
    for epilog in (EPILOG, cmd_show.EPILOG):
        named = set(re.findall(r"(?:show|plugin=)\s*(?:[\w-]+:)?(\w+)", epilog))
        assert named and named <= demo, named
