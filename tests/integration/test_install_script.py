"""scripts/_pip.sh, the pip runner of install.sh, with a real pip in a real venv: the
complaints about peers installed without their dependencies on purpose go to a log and
one line says so; anything else pip says is shown; a failing pip stops the script."""

from __future__ import annotations

import os
import subprocess
import sysconfig
import venv
import zipfile
from pathlib import Path

import pip
import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _wheel(where: Path, name: str, requires: list[str]) -> None:
    info = f"{name}-1.0.dist-info"
    files = {f"{name}/__init__.py": "",
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
                                 + "".join(f"Requires-Dist: {r}\n" for r in requires),
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(where / f"{name}-1.0-py3-none-any.whl", "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A fresh venv (this environment's pip linked in, nothing else) and a wheelhouse:
    `partialpeer` and `otherpkg` need something absent, and both need `helper`."""
    base = tmp_path_factory.mktemp("pip")
    wheels = base / "wheels"
    wheels.mkdir()
    _wheel(wheels, "partialpeer", ["absent-dependency", "absent-too", "helper"])
    _wheel(wheels, "otherpkg", ["also-absent>=2", "helper"])
    _wheel(wheels, "helper", [])
    venv.EnvBuilder(with_pip=False).create(base / "venv")
    linked = base / "pip-only"
    linked.mkdir()
    (linked / "pip").symlink_to(Path(pip.__file__).parent)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(base / "venv"),
                                                    "platbase": str(base / "venv")}))
    (site / "pip-only.pth").write_text(f"{linked}\n")
    return {"PATH": os.environ["PATH"], "VENV": str(base / "venv"), "WHEELS": str(wheels),
            "PARTIAL_PEERS": "openrlhf partialpeer", "PEER_LOG": str(base / "pip-peers.log")}


def _pip_run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    script = f"source {ROOT / 'scripts' / '_pip.sh'}; pip_run \"$@\"; pip_peer_note 'why'; echo done"
    return subprocess.run(["bash", "-c", script, "pip_run", *args], capture_output=True, text=True,
                          env=env, timeout=180)


def test_complaints_about_the_partial_peers_go_to_the_log_and_the_rest_are_shown(env):
    quiet = ("install", "--quiet", "--no-index", "--find-links", env["WHEELS"])
    first = _pip_run(env, *quiet, "--no-deps", "partialpeer", "otherpkg")
    assert (first.returncode, first.stdout, first.stderr) == (0, "done\n", "")

    done = _pip_run(env, *quiet, "helper")  # pip now lists what its two dependents lack
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "ERROR: pip's dependency resolver does not currently take into account all the packages "
        "that are installed. This behaviour is the source of the following dependency conflicts.",
        "otherpkg 1.0 requires also-absent>=2, which is not installed.",
    ]
    assert Path(env["PEER_LOG"]).read_text() == (
        "partialpeer 1.0 requires absent-dependency, which is not installed.\n"
        "partialpeer 1.0 requires absent-too, which is not installed.\n")
    assert done.stdout == (
        "note: openrlhf and partialpeer are installed without some of their dependencies, on purpose "
        f"(why): pip's complaints about that (2 lines) are in {env['PEER_LOG']}\ndone\n")


def test_a_failing_pip_stops_the_script_with_its_output(env):
    failed = _pip_run(env, "install", "--no-index", "--find-links", env["WHEELS"], "not-in-the-wheelhouse")
    assert failed.returncode == 1
    assert "No matching distribution found for not-in-the-wheelhouse" in failed.stderr
    assert failed.stderr.splitlines()[-1] == (
        f"install.sh: pip install --no-index --find-links {env['WHEELS']} not-in-the-wheelhouse "
        "failed (exit 1)")
    assert "done" not in failed.stdout
