"""`verl-rewards new` end to end: the generated package, as is, installs with
pip into a fresh venv, passes `verl-rewards check` there, and its tests pass."""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import uuid
from pathlib import Path

import pytest

import verl_rewards
from verl_rewards.cli.main import main

REPO = Path(verl_rewards.__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _run(argv: list[str | Path], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)
    assert done.returncode == 0, f"{argv}\n{done.stdout}\n{done.stderr}"
    return done


def _pip(venv: Path, *args: str | Path) -> None:
    # This environment's pip installs into the venv (`--python`): no ensurepip needed.
    _run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "--quiet",
          "--disable-pip-version-check", *args])


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv that sees this environment's packages and has `verl-rewards`."""
    if not (REPO / "pyproject.toml").is_file():
        pytest.skip("verl-rewards is not installed from its source tree")
    # --no-build-isolation builds with this environment's setuptools (found, not imported:
    # importing it after another test imported distutils trips setuptools' distutils shim).
    assert importlib.util.find_spec("setuptools") is not None
    venv = tmp_path_factory.mktemp("new-e2e") / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", venv])
    # --system-site-packages exposes the *base* interpreter's packages, not this
    # venv's (where verl-rewards' dependencies, pytest and setuptools live), so
    # chain this environment's site-packages in, .pth files included.
    purelib = _run([venv / "bin" / "python", "-c",
                    "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    Path(purelib, "_verl_rewards_test_parent.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    _pip(venv, "install", "--no-deps", "--no-build-isolation", "-e", REPO)  # bin/verl-rewards
    return venv


def test_generated_package_installs_passes_check_and_its_tests(venv, tmp_path, capsys):
    package = tmp_path / "acme"
    assert main(["new", "acme_reward", str(package)]) == 0
    capsys.readouterr()

    _pip(venv, "install", "--no-deps", "--no-build-isolation", package)

    listed = _run([venv / "bin" / "verl-rewards", "list"]).stdout
    assert ["acme_reward", "acme-reward", "0.1.0", "acme_reward.reward:compute_score"] in [
        line.split() for line in listed.splitlines()]
    checked = _run([venv / "bin" / "verl-rewards", "check", "acme_reward"])
    assert checked.stdout == (
        "ok   acme_reward (acme-reward 0.1.0): sample, sync function; 2/2 examples passed\n"
        "\nchecked 1 plugin(s): 1 ok, 0 failed\n")
    tests = _run([venv / "bin" / "python", "-m", "pytest", package / "tests", "-q",
                  "-p", "no:cacheprovider"], cwd=package)
    assert "4 passed" in tests.stdout

    # Installed only in the venv: this environment does not see it.
    assert main(["list"]) == 0
    assert "acme_reward" not in capsys.readouterr().out


@pytest.mark.parametrize("place", ["a temp dir", "this checkout"])
def test_the_printed_next_steps_work_as_printed_without_activating(venv, tmp_path, place):
    # Inside the checkout (where docs/cli.md runs it) the checkout's own pytest settings
    # (--import-mode=importlib, rootdir, a timeout option) must not reach the new package.
    where = REPO if place == "this checkout" else tmp_path
    name = f"steps_{uuid.uuid4().hex[:8]}"
    try:
        created = _run([venv / "bin" / "verl-rewards", "new", name], cwd=where)
        steps = [shlex.split(line) for line in created.stdout.split("next (")[1].splitlines()[1:]]
        install, check, pytest_ = steps
        assert install[:4] == [str(venv / "bin" / "python"), "-m", "pip", "install"]
        # Offline here: no dependency resolution, build with this environment's setuptools.
        _run([*install, "--quiet", "--no-deps", "--no-build-isolation"], cwd=where)
        assert _run(check, cwd=where).stdout.startswith(f"ok   {name} ({name.replace('_', '-')} 0.1.0)")
        tests = _run([*pytest_, "-p", "no:cacheprovider"], cwd=where).stdout
        assert f"rootdir: {where / name}\nconfigfile: pyproject.toml" in tests
        assert "4 passed" in tests and "Unknown config option" not in tests
    finally:
        shutil.rmtree(where / name, ignore_errors=True)
