"""What `pip install verl-rewards` puts into site-packages: the wheel, built offline
from this checkout, holds only `verl_rewards` (no generic top-level `trainer`)
and declares the third-party packages the library imports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import verl_rewards

REPO = Path(verl_rewards.__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built from a copy of the checkout (the build writes
    build/ and *.egg-info next to the sources; keep those out of the checkout)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in ("verl_rewards", "trainer"):  # trainer/ sits next to it, as in the checkout
        shutil.copytree(REPO / name, source / name, ignore=ignore)
    out = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--quiet", "--disable-pip-version-check", "-w", str(out), str(source)],
        capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    [built] = out.glob("verl_rewards-*.whl")
    return built


def test_the_wheel_installs_only_verl_rewards_at_top_level(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    top = sorted({name.split("/")[0] for name in names})
    assert [t for t in top if not t.startswith("verl_rewards")] == []
    assert "verl_rewards/py.typed" in names
    assert "verl_rewards/integrations/openrlhf_reward.py" in names
    assert not [n for n in names if "trainer/" in n and not n.startswith("verl_rewards/")]


def test_the_wheel_declares_numpy_which_the_library_imports(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        [metadata] = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        requires = Parser().parsestr(zf.read(metadata).decode()).get_all("Requires-Dist") or []
    unconditional = {r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
                     for r in requires if "extra ==" not in r}
    assert {"numpy", "omegaconf", "pyyaml", "ray", "tqdm"} <= unconditional


def test_the_trainer_runs_from_the_checkout_with_its_config(tmp_path: Path) -> None:
    # Not installed: importable from the checkout only, and it finds its YAML there.
    elsewhere = subprocess.run([sys.executable, "-c", "import trainer"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=60,
                               env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert "No module named 'trainer'" in elsewhere.stderr
    here = subprocess.run([sys.executable, "-c", "from trainer.settings import DEFAULT_CONFIG, "
                           "load_config; print(DEFAULT_CONFIG.is_file(), load_config([]).reward['plugin'])"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert here.stdout.split() == ["True", "copy_digits"], here.stderr
