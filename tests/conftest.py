"""Shared fixtures: real installed distributions, one Ray session, clean modules."""

from __future__ import annotations

import importlib.metadata
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

import pytest

from verl_rewards import resolve as resolve_module

MakeDist = Callable[..., Path]


def pytest_sessionstart(session: pytest.Session) -> None:
    """Say how to get the test plugins, rather than fail hundreds of tests without them."""
    try:
        importlib.metadata.version("verl-rewards-testkit")
    except importlib.metadata.PackageNotFoundError:
        pytest.exit("the test plugins (tests/fixtures/testkit) are not installed in this "
                    "environment: run `bash scripts/install.sh --test` first", returncode=4)


@pytest.fixture
def make_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MakeDist:
    """Create a real, importable installed distribution under ``tmp_path``.

    ``entry_points`` is either the text of ``entry_points.txt`` or a mapping
    ``{name: "module:attr"}`` of ``verl_rewards`` plugins. ``modules`` maps
    relative file paths (``pkg/__init__.py``) to source. Returns the
    ``.dist-info`` directory (its parent is the site directory).
    """
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))  # also invalidates import caches

    def make(name: str, version: str, entry_points: str | Mapping[str, str],
             modules: dict[str, str] | None = None, where: Path | None = None) -> Path:
        root = where or site
        info = root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        info.joinpath("METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        if not isinstance(entry_points, str):
            entry_points = "[verl_rewards]\n" + "".join(
                f"{plugin} = {target}\n" for plugin, target in entry_points.items())
        info.joinpath("entry_points.txt").write_text(textwrap.dedent(entry_points))
        for filename, source in (modules or {}).items():
            path = root.joinpath(filename)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
        return info

    return make


@pytest.fixture
def broken_dist(make_dist: MakeDist) -> Path:
    """``broken-rewards 0.2``: plugin ``broken`` = ``plug_broken:score``, whose
    module fails to import (``import numpyy_not_installed``). Returns its
    ``.dist-info`` directory; pass ``.parent`` as PYTHONPATH to a subprocess."""
    return make_dist("broken-rewards", "0.2", {"broken": "plug_broken:score"},
                     {"plug_broken.py": "import numpyy_not_installed\n"})


class Dist(NamedTuple):
    name: str
    version: str

    @property
    def label(self) -> str:
        """``name version``, as plugin display names show it."""
        return f"{self.name} {self.version}"


@pytest.fixture(scope="session")
def testkit() -> Dist:
    """The installed test plugins (tests/fixtures/testkit), name and version."""
    name = "verl-rewards-testkit"
    return Dist(name, importlib.metadata.version(name))


@pytest.fixture(autouse=True)
def _restore_modules() -> Iterator[None]:
    """Forget modules and resolved rewards a test imported."""
    before = set(sys.modules)
    cache = dict(resolve_module._cache)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("verl_rewards_file_", "tp_", "plug_", "acme_reward")):
            del sys.modules[name]
    resolve_module._cache.clear()
    resolve_module._cache.update(cache)


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    """One local Ray session for the whole test run (token auth stays on)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture
def reward_file(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a reward file and return its path."""

    def write(source: str, filename: str = "my_reward.py") -> Path:
        path = tmp_path / filename
        path.write_text(textwrap.dedent(source))
        return path

    return write
