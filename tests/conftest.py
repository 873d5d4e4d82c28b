"""Shared fixtures: real installed distributions, one Ray session, clean modules."""

from __future__ import annotations

import importlib.metadata
import logging
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
        if name.startswith(("verl_rewards_file_", "tp_", "plug_", "acme_reward", "my_reward")):
            del sys.modules[name]
    resolve_module._cache.clear()
    resolve_module._cache.update(cache)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Groups for pytest-xdist (``--dist loadgroup``, set in pyproject.toml).

    Tests on the shared Ray session go to two groups, so at most two workers start a
    session: taken in turn, test by test (a file's slow tests spread over both), a file
    that makes a module- or session-wide fixture as one. Other tests whose file makes
    such a fixture stay together, so it is made once; every other test goes wherever a
    worker is free."""
    turn = 0
    placed: dict[str, str] = {}
    for item in items:
        file = _file(item)
        shared = _makes_a_shared_fixture(item, file)
        if "ray_session" in getattr(item, "fixturenames", ()):
            if not (shared and file in placed):
                placed[file] = f"ray-session-{turn % 2}"
                turn += 1
            item.add_marker(pytest.mark.xdist_group(placed[file]))
        elif shared:
            item.add_marker(pytest.mark.xdist_group(file))


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _makes_a_shared_fixture(item: pytest.Item, file: str) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    defs = getattr(info, "name2fixturedefs", {}) if info is not None else {}
    return any(d.scope != "function" and d.baseid == file for chain in defs.values() for d in chain)


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


# The real tree's manager, taken before any host is imported (``logging.root.manager``
# would not do: the root has no manager of its own, it reads ``Logger.manager``).
_REAL_MANAGER = logging.Logger.manager
assert _REAL_MANAGER.root is logging.root, "a host swapped logging's root before the tests' conftest ran"


def _restore_logging_tree() -> None:
    """Put back ``logging``'s own root and manager if a host swapped them, adopting
    the loggers made meanwhile (their parents re-linked into the real tree).

    A host may swap more than once before this runs (AReaL swaps on every module
    import that makes a logger, so at collection several times): loggers made under
    an earlier swap are in no manager this can see. Ours are found as the module
    globals of the ``verl_rewards`` packages and re-linked the same way. With no swap
    in place there is nothing to do: a logger is only cut off while a swap is."""
    manager = _REAL_MANAGER
    rogue = logging.Logger.manager
    if rogue is manager and logging.Logger.root is logging.root:
        return
    logging.Logger.root, logging.Logger.manager = logging.root, manager
    for name, lg in list(rogue.loggerDict.items()):
        if isinstance(lg, logging.Logger) and not isinstance(manager.loggerDict.get(name), logging.Logger):
            manager.loggerDict[name], lg.manager, lg.disabled = lg, manager, False
    loggers = {n: lg for n, lg in manager.loggerDict.items() if isinstance(lg, logging.Logger)}
    orphans = _orphaned_loggers(manager)
    for lg in orphans:
        if not isinstance(manager.loggerDict.get(lg.name), logging.Logger):
            manager.loggerDict[lg.name] = loggers[lg.name] = lg
        lg.manager, lg.disabled = manager, False
    # Each to its nearest ancestor in the real tree, by logging's own linking: a missing
    # ancestor gets a placeholder, so a parent made later (``getLogger("verl_rewards")``
    # after ``verl_rewards.remote``) adopts the child as it does in a tree never swapped.
    for lg in [*loggers.values(), *orphans]:
        manager._fixupParents(lg)  # type: ignore[attr-defined]


def _orphaned_loggers(manager: logging.Manager) -> list[logging.Logger]:
    """Our modules' loggers cut off from the real tree: made by another manager, or
    their parents leading to another root."""
    return [value for module_name, module in list(sys.modules.items())
            if module_name.startswith("verl_rewards") and module is not None
            for value in list(vars(module).values())
            if isinstance(value, logging.Logger) and value is not logging.root
            and (value.manager is not manager or _top(value) is not logging.root)]


def _top(logger: logging.Logger) -> logging.Logger:
    while logger.parent is not None:
        logger = logger.parent
    return logger


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """Undo what a host does to this process's logging.

    AReaL's ``getLogger`` (called when its modules are imported, and again at run
    time) swaps in a new root logger and manager and runs
    ``dictConfig(disable_existing_loggers=True)``: loggers made before it are
    disabled, and loggers made after it hang off a root that pytest's ``caplog``
    never sees. Each test starts and ends with the real tree, its loggers enabled."""
    _restore_logging_tree()
    for name, lg in _REAL_MANAGER.loggerDict.items():  # ours, disabled at collection
        if isinstance(lg, logging.Logger) and name.startswith("verl_rewards"):
            lg.disabled = False
    enabled = {name for name, lg in _REAL_MANAGER.loggerDict.items()
               if isinstance(lg, logging.Logger) and not lg.disabled}
    yield
    _restore_logging_tree()
    for name in enabled:
        logger = _REAL_MANAGER.loggerDict.get(name)
        if isinstance(logger, logging.Logger):
            logger.disabled = False


@pytest.fixture
def verl_adapter_cache_cleared() -> Iterator[None]:
    """The verl function adapter's cached scorers (one per reward section, kept for the
    process) are the test's own: none before it, none left for the next."""
    from verl_rewards.integrations import verl as adapter

    adapter._entries.clear()
    yield
    adapter._entries.clear()


class RepoDistribution(NamedTuple):
    """A distribution this repository publishes, as its pyproject.toml declares it."""

    directory: Path
    name: str
    version: str
    entry_points: tuple[str, ...]  # its verl_rewards entry points, in declaration order
    project: Mapping[str, object]  # the [project] table
    pyproject: Mapping[str, object]  # the whole file

    @property
    def package(self) -> str:
        """Its one top-level import package: the name with underscores."""
        return self.name.replace("-", "_")


@pytest.fixture(scope="session")
def repo_distributions() -> list[RepoDistribution]:
    """The root, every plugins/*/ and examples/toy_plugin/ (scripts/build_dists.sh builds
    these; the test-only plugins under tests/fixtures/ are not published)."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    found = []
    for directory in [root, *sorted(root.glob("plugins/*/")), root / "examples" / "toy_plugin"]:
        if not (directory / "pyproject.toml").is_file():
            continue
        pyproject = tomllib.loads((directory / "pyproject.toml").read_text(encoding="utf-8"))
        project = pyproject["project"]
        entry_points = tuple(project.get("entry-points", {}).get("verl_rewards", {}))
        found.append(RepoDistribution(directory, project["name"], str(project.get("version")),
                                      entry_points, project, pyproject))
    return found
