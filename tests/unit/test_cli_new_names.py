"""`verl-rewards new` refuses names that would replace an installed distribution or module,
and warns when the plugin name is taken."""

from __future__ import annotations

import importlib.metadata

import pytest

from verl_rewards.cli.main import main


@pytest.mark.parametrize(("name", "installed"), [
    ("verl_rewards", "verl-rewards"), ("verl-rewards", "verl-rewards"), ("ray", "ray"),
    ("torch", "torch"),
])
def test_a_name_whose_distribution_is_installed_is_refused(tmp_path, capsys, name, installed):
    assert main(["new", name, str(tmp_path / "pkg")]) == 2
    err = capsys.readouterr().err
    version = importlib.metadata.version(installed)
    assert f"invalid plugin name {name!r}: distribution " in err
    assert f" {version} is installed here and installing the new package would replace it" in err
    assert not (tmp_path / "pkg").exists()


def test_a_name_whose_module_is_importable_is_refused(tmp_path, capsys):
    assert main(["new", "yaml", str(tmp_path / "pkg")]) == 2  # module of distribution PyYAML
    assert "module 'yaml' is already importable here" in capsys.readouterr().err
    assert not (tmp_path / "pkg").exists()


def test_a_taken_plugin_name_is_generated_with_a_warning(tmp_path, capsys, testkit):
    assert main(["new", "exact_match", str(tmp_path / "pkg")]) == 0
    err = capsys.readouterr().err
    assert err == (f"note: a plugin named 'exact_match' is already installed: exact_match "
                   f"({testkit.label}); with both installed, select one as DIST:exact_match "
                   "(e.g. reward.plugin=exact-match:exact_match)\n")
    assert (tmp_path / "pkg" / "pyproject.toml").is_file()
