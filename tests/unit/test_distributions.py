"""What every distribution of this repository declares, read from its files: the version
written once, the license shipped, one way to build, a changelog that names them
(docs/writing-a-plugin.md, section 7). tests/integration/test_packaging.py builds them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def _ids(dists: list) -> list[str]:
    return [d.name for d in dists]


def test_the_root_every_plugin_and_the_toy_plugin_are_distributions(repo_distributions):
    names = _ids(repo_distributions)
    assert names[0] == "verl-rewards" and names[-1] == "verl-rewards-toy"
    # install.sh and build_dists.sh take plugins/*/ with a pyproject.toml: a plugin folder
    # without one (or a folder for something else) would be left out of both silently
    folders = sorted(p.name for p in ROOT.glob("plugins/*/") if p.is_dir() and not p.name.startswith((".", "_")))
    assert folders == [d.directory.name for d in repo_distributions[1:-1]]
    assert len(set(names)) == len(names)


def test_each_version_is_written_once_in_its_pyproject(repo_distributions):
    for dist in repo_distributions:
        assert "version" not in dist.project.get("dynamic", []), dist.name
        Version(dist.version)  # a PEP 440 version, written as a literal
        for path in sorted((dist.directory / dist.package).rglob("*.py")):
            where = f"{dist.name}: {path.relative_to(ROOT)}"
            tree = ast.parse(path.read_text(encoding="utf-8"))
            assert _version_literals(tree) == [], f"{where} writes a version; read the metadata"
            assert _version_lookups_at_import(tree) == [], (
                f"{where} reads its version at import: a shipped package (reward.ship_package) "
                f"has no metadata; read it when asked (a module __getattr__)")
            for named in _version_lookups(tree):
                assert named == dist.name, f"{where} asks for the version of {named}"


def _version_literals(tree: ast.Module) -> list[int]:
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            and any(isinstance(t, ast.Name) and t.id in ("__version__", "VERSION") for t in node.targets)]


def _is_version_call(node: ast.AST) -> bool:
    """``version("verl-rewards...")``: the installed version of one of ours (a host's, such
    as trl's, is no concern here)."""
    if not isinstance(node, ast.Call):
        return False
    name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
    return (name == "version" and bool(node.args) and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).replace("_", "-").startswith("verl-rewards"))


def _version_lookups(tree: ast.Module) -> list[str]:
    return [n.args[0].value for n in ast.walk(tree) if _is_version_call(n)]  # type: ignore[attr-defined]


def _version_lookups_at_import(tree: ast.Module) -> list[int]:
    """Lines that call ``version("...")`` outside any function: run when imported."""
    found = []
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        found += [n.lineno for n in ast.walk(statement) if _is_version_call(n)]
    return found


def test_the_version_check_finds_a_version_read_at_import():
    # The form verl_rewards_models had: importing it needed its installed metadata.
    eager = ast.parse('from importlib.metadata import version\n__version__ = version("verl-rewards-x")\n')
    lazy = ast.parse('def __getattr__(name):\n    return version("verl-rewards-x")\n')
    assert (_version_lookups_at_import(eager), _version_lookups_at_import(lazy)) == ([2], [])
    assert _version_literals(ast.parse('__version__ = "1.0"\n')) == [1]


def test_each_distribution_ships_the_one_license(repo_distributions):
    declared = {"license": "Apache-2.0", "license-files": ["LICENSE"]}
    assert {d.name: {f: d.project.get(f) for f in declared} for d in repo_distributions} == {
        d.name: declared for d in repo_distributions}
    text = (ROOT / "LICENSE").read_bytes()
    differ = [d.name for d in repo_distributions
              if not (d.directory / "LICENSE").is_file() or (d.directory / "LICENSE").read_bytes() != text]
    assert differ == [], f"{differ}: copy LICENSE from the repository's root (as plugins/math has it)"


def test_each_distribution_builds_the_same_way_with_one_package(repo_distributions):
    for dist in repo_distributions:
        assert dist.pyproject["build-system"] == {
            "requires": ["setuptools>=77"], "build-backend": "setuptools.build_meta"}, dist.name
        setuptools = dist.pyproject["tool"]["setuptools"]
        packages = setuptools.get("packages", {"find": {}})
        declared = packages if isinstance(packages, list) else packages["find"].get("include")
        assert declared in ([dist.package], [f"{dist.package}*"]), dist.name
        assert "py.typed" in setuptools["package-data"][dist.package], dist.name


def _changelog_headings() -> list[str]:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.findall(r"^## (.*)$", text, flags=re.MULTILINE)


def test_the_changelog_has_one_section_per_version_newest_first(repo_distributions):
    headings = _changelog_headings()
    assert headings[0] == "[Unreleased]"
    versions = []
    for heading in headings[1:]:
        match = re.fullmatch(r"\[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}", heading)
        assert match, f"CHANGELOG.md: {heading!r} is not '[X.Y.Z] - YYYY-MM-DD'"
        versions.append(Version(match[1]))
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    core = next(d for d in repo_distributions if d.name == "verl-rewards")
    assert Version(core.version) in versions, (
        f"CHANGELOG.md has no section for verl-rewards {core.version}: a release moves the "
        f"[Unreleased] lines under '## [{core.version}] - date'")


def test_the_changelog_names_every_distribution(repo_distributions):
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    missing = [d.name for d in repo_distributions if f"`{d.name}`" not in text]
    assert missing == [], f"CHANGELOG.md does not name {missing}: add a line under [Unreleased]"
