"""`verl-rewards new NAME [DIR]`: the scaffold's files, names and refusals.

(tests/integration/test_cli_new.py installs a generated package in a fresh
venv and runs `check` and its tests there.)"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from verl_rewards.cli.main import main
from verl_rewards.cli.scaffold import Names, names_for


@pytest.mark.parametrize(("name", "names"), [
    ("my_reward", Names("my_reward", "my-reward", "my_reward")),
    ("my-reward", Names("my-reward", "my-reward", "my_reward")),
    ("Judge2", Names("Judge2", "judge2", "judge2")),
])
def test_names_derived_from_name(name, names):
    assert names_for(name) == names


@pytest.mark.parametrize("name", ["2fast", "my reward", "my__reward", "_x", "x-", "a.b", "",
                                  "é", "x" * 65, "class", "json", "asyncio"])
def test_invalid_names_exit_2_and_write_nothing(tmp_path, capsys, name):
    assert main(["new", name, str(tmp_path / "pkg")]) == 2
    assert f"invalid plugin name {name!r}" in capsys.readouterr().err
    assert not (tmp_path / "pkg").exists()


def test_generates_a_package_with_entry_point_module_test_and_readme(tmp_path, capsys):
    target = tmp_path / "pkg"
    assert main(["new", "acme_reward", str(target)]) == 0
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert files == ["README.md", "pyproject.toml", "src/acme_reward/__init__.py",
                     "src/acme_reward/reward.py", "tests/test_acme_reward.py"]
    for path in target.rglob("*.py"):
        ast.parse(path.read_text(), str(path))
    out = capsys.readouterr().out
    assert out.startswith(f"created plugin package acme-reward in {target}\n")


def test_next_steps_use_this_environments_python_and_scripts_and_the_test_extra(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["new", "acme_reward", "pkg"]) == 0
    python = sys.executable  # outside tmp_path: printed absolute
    script = Path(sys.executable).parent / "verl-rewards"
    assert script.is_file()  # this environment's console script
    steps = capsys.readouterr().out.split("next (")[1].splitlines()[1:]
    assert steps == [f"  {python} -m pip install -e './pkg[test]'",
                     f"  {script} check acme_reward",
                     f"  {python} -m pytest pkg/tests"]


def test_the_pyproject_names_the_distribution_and_declares_the_entry_point(tmp_path):
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:
        tomllib = pytest.importorskip("tomli", reason="Python 3.10 needs tomli to read TOML")
    assert main(["new", "acme_reward", str(tmp_path / "pkg")]) == 0
    project = tomllib.loads((tmp_path / "pkg" / "pyproject.toml").read_text())["project"]
    assert project["name"] == "acme-reward"
    assert project["entry-points"] == {
        "verl_rewards": {"acme_reward": "acme_reward.reward:compute_score"}}


def test_the_generated_reward_scores_its_own_examples(tmp_path, monkeypatch):
    assert main(["new", "acme_reward", str(tmp_path / "pkg")]) == 0
    monkeypatch.syspath_prepend(str(tmp_path / "pkg" / "src"))
    from verl_rewards.metadata import metadata_of

    fn = __import__("acme_reward.reward", fromlist=["compute_score"]).compute_score
    for example in metadata_of(fn).examples:
        assert fn("d", example.solution_str, example.ground_truth)["score"] == example.expected
    assert fn("d", "x\nYes", "yes", ignore_case=True) == {"score": 1.0, "answer": "yes"}


def test_default_directory_is_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["new", "acme_reward"]) == 0
    assert (tmp_path / "acme_reward" / "pyproject.toml").is_file()


def test_an_existing_empty_directory_is_used(tmp_path):
    (tmp_path / "pkg").mkdir()
    assert main(["new", "acme_reward", str(tmp_path / "pkg")]) == 0
    assert (tmp_path / "pkg" / "pyproject.toml").is_file()
    assert (tmp_path / "pkg" / "src" / "acme_reward" / "reward.py").is_file()


def test_refuses_a_non_empty_directory(tmp_path, capsys):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "keep.txt").write_text("mine")
    assert main(["new", "acme_reward", str(tmp_path / "pkg")]) == 2
    assert capsys.readouterr().err == (
        f"verl-rewards: error: {tmp_path / 'pkg'} already exists and is not empty; "
        "choose another DIR\n")
    assert [p.name for p in (tmp_path / "pkg").iterdir()] == ["keep.txt"]


def test_refuses_a_file(tmp_path, capsys):
    (tmp_path / "pkg").write_text("")
    assert main(["new", "acme_reward", str(tmp_path / "pkg")]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err


def test_next_steps_name_the_interpreter_as_a_path_even_from_its_own_directory(tmp_path, capsys,
                                                                                monkeypatch):
    monkeypatch.chdir(Path(sys.executable).parent)  # `python` alone would be looked up on PATH
    assert main(["new", "acme_reward", str(tmp_path / "pkg")]) == 0
    steps = capsys.readouterr().out.split("next (")[1].splitlines()[1:]
    name = Path(sys.executable).name
    assert steps[0].startswith(f"  ./{name} -m pip install -e ")
    assert steps[1] == "  ./verl-rewards check acme_reward"


def test_the_readme_says_the_tests_follow_reward_py(tmp_path):
    assert main(["new", "acme_reward", str(tmp_path / "pkg")]) == 0
    readme = " ".join((tmp_path / "pkg" / "README.md").read_text().split())
    assert ("`tests/test_acme_reward.py` tests the example reward as generated (the last line against the "
            "ground truth, `ignore_case`): when you change what `reward.py` scores, change those tests "
            "with it, or they fail.") in readme
