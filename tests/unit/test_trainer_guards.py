"""trainer.main refuses bad data, a used output directory, and config mistakes (exit 2),
before any model is built."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from trainer.main import main, split_config_option
from trainer.settings import DEFAULT_CONFIG, TrainerConfigError

LOCAL = ["reward.executor=local", "trainer.total_steps=1"]


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err.strip().removeprefix("trainer: ")


def _data(tmp_path: Path, *rows: dict) -> Path:
    path = tmp_path / "prompts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_row_without_ground_truth_exits_2_naming_file_and_line(tmp_path, capsys):
    data = _data(tmp_path, {"prompt": "1:", "ground_truth": "1"}, {"prompt": "2:"})
    out = tmp_path / "run"
    assert main([*LOCAL, f"data.path={data}", f"trainer.output_dir={out}"]) == 2
    assert _err(capsys).startswith(
        f"config error: {data}, line 2: missing required field ground_truth")
    assert not out.exists()


def test_a_utf8_bom_in_the_prompt_file_is_accepted(tmp_path):
    from trainer.data import load_prompts

    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"prompt": "1:", "ground_truth": "1"}).encode())
    assert [r.prompt for r in load_prompts(path)] == ["1:"]


def test_an_output_dir_holding_a_run_without_a_checkpoint_suggests_only_overwrite(
        tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "metrics.jsonl").write_text('{"step": 1, "reward_mean": 0.5}\n')
    assert main([*LOCAL, f"trainer.output_dir={out}"]) == 2
    assert _err(capsys) == (
        f"config error: trainer.output_dir {out} already holds a run (metrics.jsonl or "
        f"checkpoint/); set trainer.overwrite=true to replace it, or choose another "
        f"trainer.output_dir (it has no checkpoint to resume from)")
    assert (out / "metrics.jsonl").read_text() == '{"step": 1, "reward_mean": 0.5}\n'


def test_an_output_dir_holding_a_checkpoint_suggests_overwrite_or_resume(tmp_path, capsys):
    out = tmp_path / "run"
    (out / "checkpoint").mkdir(parents=True)
    (out / "checkpoint" / "trainer_state.pt").write_bytes(b"state")
    assert main([*LOCAL, f"trainer.output_dir={out}"]) == 2
    assert _err(capsys) == (
        f"config error: trainer.output_dir {out} already holds a run (metrics.jsonl or "
        f"checkpoint/); set trainer.overwrite=true to replace it, trainer.resume=true to "
        f"continue it, or choose another trainer.output_dir")


def test_resume_without_a_checkpoint_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*LOCAL, f"trainer.output_dir={out}", "trainer.resume=true"]) == 2
    assert _err(capsys).startswith(f"config error: trainer.resume=true but {out} holds no "
                                   "checkpoint to resume from")


def test_overwrite_and_resume_together_are_refused(tmp_path, capsys):
    assert main([*LOCAL, f"trainer.output_dir={tmp_path}", "trainer.resume=true",
                 "trainer.overwrite=true"]) == 2
    assert "set at most one of trainer.overwrite and trainer.resume" in _err(capsys)


def test_a_config_file_replaces_the_defaults_and_overrides_still_apply(tmp_path, capsys):
    config = tmp_path / "mine.yaml"
    config.write_text("trainer:\n  total_steps: 7\nreward:\n  plugin: copy_digits\n")
    assert split_config_option(["-c", str(config), "trainer.seed=3"]) == (config, ["trainer.seed=3"])
    assert split_config_option([f"--config={config}"]) == (config, [])
    assert split_config_option(["trainer.seed=3"]) == (DEFAULT_CONFIG, ["trainer.seed=3"])
    with pytest.raises(TrainerConfigError, match="-c needs a FILE.yaml"):
        split_config_option(["-c"])
    out = tmp_path / "run"
    (out / "checkpoint").mkdir(parents=True)  # stop before training: the config is what we test
    assert main(["-c", str(config), f"trainer.output_dir={out}", "reward.executor=local"]) == 2
    assert "already holds a run" in _err(capsys)


def test_a_yaml_error_names_the_config_file(tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text("trainer: [total_steps: \n  - : :\n")
    assert main(["--config", str(config)]) == 2
    assert _err(capsys).startswith(f"config error: cannot parse config file {config}: ")


def test_a_top_level_typo_in_the_file_suggests_the_section(tmp_path, capsys):
    config = tmp_path / "typo.yaml"
    config.write_text("rewards:\n  plugin: copy_digits\n")
    assert main(["-c", str(config)]) == 2
    assert _err(capsys) == (f"config error: config file {config}: unknown key 'rewards'. Did you "
                            "mean 'reward'? Valid keys: model, data, rollout, algo, trainer, "
                            "reward.")


def test_a_misspelt_key_gets_the_closest_key_not_a_class_name(capsys):
    assert main(["trainer.total_step=3"]) == 2
    err = _err(capsys)
    assert err.startswith("config error: unknown key 'trainer.total_step'. Did you mean "
                          "'trainer.total_steps'?")
    assert "LoopConfig" not in err


def test_reward_kwargs_the_plugin_does_not_take_exit_2_before_training(tmp_path, capsys):
    assert main([*LOCAL, f"trainer.output_dir={tmp_path / 'run'}", "reward.kwargs.foo=1"]) == 2
    err = _err(capsys)
    assert err.startswith("reward config error: reward.kwargs 'foo' not accepted by reward "
                          "copy_digits (verl-rewards-toy ")
    assert err.count("not accepted") == 1


def test_overwrite_clears_the_old_run_so_its_checkpoint_is_never_resumed(tmp_path):
    from trainer.main import prepare

    out = tmp_path / "run"
    (out / "checkpoint").mkdir(parents=True)
    (out / "checkpoint" / "trainer_state.pt").write_bytes(b"an old run's state")
    (out / "metrics.jsonl").write_text('{"step": 4, "reward_mean": 0.5}\n')
    prepare([*LOCAL, f"trainer.output_dir={out}", "trainer.overwrite=true"])
    assert not (out / "checkpoint").exists() and not (out / "metrics.jsonl").exists()


def test_resume_with_other_model_settings_is_refused_naming_them(tmp_path):
    import yaml

    from trainer.main import prepare
    from trainer.settings import as_dict, load_config

    out = tmp_path / "run"
    (out / "checkpoint").mkdir(parents=True)
    (out / "checkpoint" / "trainer_state.pt").write_bytes(b"state")
    saved = load_config([*LOCAL, f"trainer.output_dir={out}"])
    (out / "config.yaml").write_text(yaml.safe_dump(as_dict(saved), sort_keys=False))
    with pytest.raises(TrainerConfigError, match=r"model.hidden_size, model.intermediate_size differ from the run in"):
        prepare([*LOCAL, f"trainer.output_dir={out}", "trainer.resume=true", "model.hidden_size=32",
                 "model.intermediate_size=64"])
    prepare([*LOCAL, f"trainer.output_dir={out}", "trainer.resume=true"])  # the same settings resume


def test_a_reward_file_importing_a_missing_module_exits_2_in_one_line_naming_it(
        tmp_path, capsys, reward_file):
    path = reward_file("import os\nimport numpyy\n\ndef compute_score(a, b, c, d=None):\n"
                       "    return 1.0\n")
    out = tmp_path / "run"
    assert main([f"reward.path={path}", "trainer.total_steps=1", f"trainer.output_dir={out}"]) == 2
    err = _err(capsys)
    assert "\n" not in err and not out.exists()
    assert err.split("): ", 1)[1] == (
        f"the reward file imports 'numpyy' (at {path}:2), which is not installed in this Python "
        f"environment ({sys.prefix}); install 'numpyy' here, or correct the name: "
        "ModuleNotFoundError: No module named 'numpyy' (in the driver, before any Ray worker "
        "started; set reward.workers_only=true if only the Ray workers have what the file imports)")


def test_a_reward_file_importing_a_sibling_gets_no_ray_settings_advice(tmp_path, capsys, reward_file):
    reward_file("X = 1\n", "helpers_here.py")
    path = reward_file("import helpers_here\n\ndef compute_score(a, b, c, d=None):\n    return 1.0\n")
    assert main([f"reward.path={path}", "trainer.total_steps=1",
                 f"trainer.output_dir={tmp_path / 'run'}"]) == 2
    err = _err(capsys)
    assert "a module beside it" in err and "verl-rewards new NAME" in err
    assert "workers_only" not in err and "ship_package" not in err


def test_a_plugin_that_does_not_import_exits_2_in_one_line_with_plugin_advice(
        tmp_path, capsys, broken_dist):
    assert main(["reward.plugin=broken", "trainer.total_steps=1",
                 f"trainer.output_dir={tmp_path / 'run'}"]) == 2
    err = _err(capsys)
    assert err.startswith(
        "cannot load reward broken (broken-rewards 0.2): importing plug_broken failed: it imports "
        f"'numpyy_not_installed' (at {broken_dist.parent}/plug_broken.py:1), which is not installed")
    assert "\n" not in err and err.endswith(
        "or reward.ship_package=true to ship it from here when only a dependency is missing here)")
