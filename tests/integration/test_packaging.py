"""The built distributions: scripts/build_dists.sh builds every distribution (the root,
plugins/*/, examples/toy_plugin/) from a copy of the checkout, each wheel from its sdist,
and checks them with twine; the wheels are then installed from those files only into a
fresh venv, where `verl-rewards list` and `check` run.

The fresh venv gets the third-party packages of this environment through a read-only
view (links to site-packages' entries, ours left out) instead of installing them again:
offline, in seconds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import verl_rewards

REPO = Path(verl_rewards.__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".venv")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV", "VIRTUAL_ENV")}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The distributions' files, copied: building writes *.egg-info next to the sources,
    and trainer/ sits beside verl_rewards/ as in the checkout (the wheel leaves it out)."""
    copy = tmp_path_factory.mktemp("checkout")
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "CHANGELOG.md"):
        shutil.copy2(REPO / name, copy / name)
    for name in ("verl_rewards", "trainer", "plugins", "examples/toy_plugin", "scripts"):
        shutil.copytree(REPO / name, copy / name, ignore=_IGNORE)
    return copy


@pytest.fixture(scope="module")
def dist(checkout: Path) -> Path:
    """Every sdist and wheel, built by scripts/build_dists.sh with this environment's
    setuptools (the script's default, isolated builds, would fetch setuptools per build)."""
    out = checkout / "dist"
    done = subprocess.run(["bash", "scripts/build_dists.sh", "--no-isolation", "--outdir", str(out)],
                          cwd=checkout, capture_output=True, text=True, timeout=600,
                          env={**_env(), "PYTHON": sys.executable})
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _files(dist_dir: Path, dist) -> tuple[Path, Path]:
    stem = f"{dist.package}-{dist.version}"
    return dist_dir / f"{stem}.tar.gz", dist_dir / f"{stem}-py3-none-any.whl"


def _sources(dist) -> set[str]:
    """The files of a distribution's package in the checkout, relative to its directory."""
    root = dist.directory / dist.package
    return {p.relative_to(dist.directory).as_posix() for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


def test_each_distribution_has_one_sdist_and_one_wheel_of_its_version(dist, repo_distributions):
    expected = {path.name for d in repo_distributions for path in _files(dist, d)}
    assert {p.name for p in dist.iterdir()} == expected


def test_each_sdist_holds_its_package_readme_and_license_and_no_tests(dist, repo_distributions):
    for d in repo_distributions:
        sdist, _ = _files(dist, d)
        with tarfile.open(sdist) as tar:
            top = f"{d.package}-{d.version}/"
            names = {m.name.removeprefix(top) for m in tar.getmembers() if m.isfile()}
        assert {"PKG-INFO", "pyproject.toml", "README.md", "LICENSE"} <= names, d.name
        assert _sources(d) <= names, f"{d.name}: the sdist lacks {sorted(_sources(d) - names)}"
        assert not [n for n in names if n.startswith("tests/")], (
            f"{d.name}: its sdist holds tests/ (copy plugins/math/MANIFEST.in)")


def test_each_wheel_holds_every_file_of_its_package_and_nothing_else(dist, repo_distributions):
    for d in repo_distributions:
        _, wheel = _files(dist, d)
        with zipfile.ZipFile(wheel) as zf:
            names = set(zf.namelist())
            metadata = Parser().parsestr(zf.read(f"{d.package}-{d.version}.dist-info/METADATA").decode())
        info = {n for n in names if n.startswith(f"{d.package}-{d.version}.dist-info/")}
        # py.typed, the code plugin's harness files, any data the package reads at run time
        assert names - info == _sources(d), d.name
        assert f"{d.package}-{d.version}.dist-info/licenses/LICENSE" in info, d.name
        assert (metadata["Name"], metadata["Version"], metadata["License-Expression"]) == (
            d.name, d.version, "Apache-2.0")


def test_the_core_wheel_declares_numpy_which_the_library_imports(dist, repo_distributions):
    core = next(d for d in repo_distributions if d.name == "verl-rewards")
    with zipfile.ZipFile(_files(dist, core)[1]) as zf:
        requires = Parser().parsestr(
            zf.read(f"verl_rewards-{core.version}.dist-info/METADATA").decode()).get_all("Requires-Dist")
    unconditional = {r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
                     for r in requires or [] if "extra ==" not in r}
    assert {"numpy", "omegaconf", "pyyaml", "ray", "tqdm"} <= unconditional


@pytest.fixture(scope="module")
def third_party(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A view of this environment's site-packages without our distributions (installed
    editable here) or their .pth hooks: a link per entry."""
    view = tmp_path_factory.mktemp("third-party")
    for entry in Path(sysconfig.get_path("purelib")).iterdir():
        name = entry.name.lower().replace("-", "_")
        if "verl_rewards" not in name and not name.endswith(".pth"):
            (view / entry.name).symlink_to(entry)
    return view


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory, dist: Path, third_party: Path,
               repo_distributions) -> Path:
    """A new venv with our wheels installed from dist/ only (no index, no dependencies
    resolved: the third-party ones are this environment's, seen through the view)."""
    where = tmp_path_factory.mktemp("venv") / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(where)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)}))
    (site / "third_party.pth").write_text(f"{third_party}\n")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(where / "bin" / "python"), "install", "--quiet",
         "--disable-pip-version-check", "--no-index", "--no-deps", "--find-links", str(dist),
         *[d.name for d in repo_distributions]],
        capture_output=True, text=True, timeout=300, env=_env())
    assert done.returncode == 0, done.stderr
    return where


def _run(venv_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv_dir / "bin" / args[0]), *args[1:]], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=_env())


def test_the_installed_wheels_list_every_plugin_from_the_fresh_venv(fresh_venv, repo_distributions,
                                                                   tmp_path):
    done = _run(fresh_venv, "verl-rewards", "list", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = sorted((p["name"], p["distribution"], p["version"]) for p in json.loads(done.stdout))
    assert listed == sorted((name, d.name, d.version) for d in repo_distributions
                            for name in d.entry_points)
    where = _run(fresh_venv, "python", "-c", "import importlib, sys; print(*(importlib.import_module(m)"
                 ".__file__ for m in sys.argv[1:]))", *[d.package for d in repo_distributions], cwd=tmp_path)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(fresh_venv), "platbase": str(fresh_venv)}))
    assert [Path(f).parent.parent for f in where.stdout.split()] == [site] * len(repo_distributions), where.stderr


def test_each_plugin_distribution_passes_check_from_the_fresh_venv(fresh_venv, repo_distributions, tmp_path):
    # One entry point per distribution, its first: the code plugin's runs programs through
    # its harness files, the math plugin's reads its data, whatever a new plugin ships.
    first = [d.entry_points[0] for d in repo_distributions if d.entry_points]
    done = _run(fresh_venv, "verl-rewards", "check", *first, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == f"checked {len(first)} plugin(s): {len(first)} ok, 0 failed"


def test_the_wheels_declared_dependencies_are_met_by_the_recorded_stack(fresh_venv, repo_distributions):
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(fresh_venv / "bin" / "python"),
                           "check"], capture_output=True, text=True, timeout=300, env=_env())
    # pip check ran (0: nothing broken, 1: a line per broken requirement), then none is ours
    assert done.returncode in (0, 1) and done.stdout.strip(), (done.returncode, done.stderr)
    ours = {d.name for d in repo_distributions}
    assert [line for line in done.stdout.splitlines() if line.split(" ")[0] in ours] == []


def test_each_package_imports_without_its_metadata_as_ship_package_sends_it(dist, third_party,
                                                                          repo_distributions, tmp_path):
    # reward.ship_package sends the package's files, not its dist-info: unpack only those.
    for d in repo_distributions:
        with zipfile.ZipFile(_files(dist, d)[1]) as zf:
            zf.extractall(tmp_path, [n for n in zf.namelist() if n.startswith(f"{d.package}/")])
    code = ("import importlib, sys; sys.path[:0] = [sys.argv[1]]; sys.path.append(sys.argv[2]); "
            "[importlib.import_module(m) for m in sys.argv[3:]]; print('imported')")
    done = subprocess.run([sys.executable, "-S", "-c", code, str(tmp_path), str(third_party),
                           *[d.package for d in repo_distributions]],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=_env())
    assert (done.returncode, done.stdout) == (0, "imported\n"), done.stderr


def test_the_trainer_runs_from_the_checkout_with_its_config(tmp_path: Path) -> None:
    # Not installed: importable from the checkout only, and it finds its YAML there.
    elsewhere = subprocess.run([sys.executable, "-c", "import trainer"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=60, env=_env())
    assert "No module named 'trainer'" in elsewhere.stderr
    here = subprocess.run([sys.executable, "-c", "from trainer.settings import DEFAULT_CONFIG, "
                           "load_config; print(DEFAULT_CONFIG.is_file(), load_config([]).reward['plugin'])"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert here.stdout.split() == ["True", "copy_digits"], here.stderr
