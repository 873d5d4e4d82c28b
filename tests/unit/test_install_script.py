"""scripts/install.sh: everything editable; test plugins and tools only with --test."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _commands(*args: str) -> list[str]:
    done = subprocess.run(["bash", str(ROOT / "scripts" / "install.sh"), "--dry-run", *args],
                          capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "VENV": "/nonexistent-venv"})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_demo_install_links_every_plugin_and_leaves_out_the_test_plugins():
    *_, torch, project = _commands()
    assert torch == "pip install --quiet torch==2.13.0"  # pinned, before anything pulls one
    args = project.split()[3:]
    assert args[:2] == ["-e", ".[trainer,dev]"]
    linked = args[3::2]
    assert all(flag == "-e" for flag in args[::2])
    plugins = sorted(f"./{p.parent.relative_to(ROOT)}" for p in ROOT.glob("plugins/*/pyproject.toml"))
    assert linked == [*plugins, "./examples/toy_plugin"]
    assert not any("testkit" in a for a in args)


def test_the_test_install_adds_test_tools_peers_and_test_plugins():
    project = _commands("--test")[-1].split()[3:]
    assert project[:2] == ["-e", ".[trainer,dev,test,peers]"]
    assert project[-2:] == ["-e", "./tests/fixtures/testkit"]


def test_an_unknown_option_exits_2():
    done = subprocess.run(["bash", str(ROOT / "scripts" / "install.sh"), "--tset"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "unknown option --tset" in done.stderr
