"""Shared fixtures: real installed distributions, one Ray session, clean modules."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from verl_rewards import resolve as resolve_module

MakeDist = Callable[..., Path]


@pytest.fixture
def make_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MakeDist:
    """Create a real, importable installed distribution under ``tmp_path``.

    ``modules`` maps relative file paths (``pkg/__init__.py``) to source.
    """
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))  # also invalidates import caches

    def make(name: str, version: str, entry_points: str,
             modules: dict[str, str] | None = None, where: Path | None = None) -> Path:
        root = where or site
        info = root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        info.joinpath("METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        info.joinpath("entry_points.txt").write_text(textwrap.dedent(entry_points))
        for filename, source in (modules or {}).items():
            path = root.joinpath(filename)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
        return info

    return make


@pytest.fixture(autouse=True)
def _restore_modules() -> Iterator[None]:
    """Forget modules and resolved rewards a test imported."""
    before = set(sys.modules)
    cache = dict(resolve_module._cache)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("verl_rewards_file_", "tp_", "plug")):
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
