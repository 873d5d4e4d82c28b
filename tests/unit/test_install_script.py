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


def _project_args(commands: list[str]) -> list[str]:
    """The editable install's arguments, without the torch pin repeated at its end."""
    (project,) = [c for c in commands if " -e .[" in c]
    assert project.startswith("pip install --quiet --no-build-isolation ")  # setuptools is in the venv
    args = project.split()[4:]
    assert args[-3:] == ["torch==2.13.0", "-c", "constraints.txt"]  # no peer may move torch
    return args[:-3]


def test_the_demo_install_links_every_plugin_and_leaves_out_the_test_plugins():
    commands = _commands()
    torch = commands[commands.index(next(c for c in commands if " -e .[" in c)) - 1]
    assert torch == "pip install --quiet torch==2.13.0 -c constraints.txt"  # before anything pulls one
    args = _project_args(commands)
    assert args[:2] == ["-e", ".[trainer,dev,serve]"]
    linked = args[3::2]
    assert all(flag == "-e" for flag in args[::2])
    plugins = sorted(f"./{p.parent.relative_to(ROOT)}" for p in ROOT.glob("plugins/*/pyproject.toml"))
    assert linked == [*plugins, "./examples/toy_plugin"]
    assert not any("testkit" in a for a in args)


def test_the_test_install_adds_test_tools_peers_and_test_plugins():
    commands = _commands("--test")
    project = _project_args(commands)
    assert project[:2] == ["-e", ".[trainer,dev,serve,test,peers]"]
    assert project[-2:] == ["-e", "./tests/fixtures/testkit"]
    # OpenRLHF's loader and parser without its GPU stack; verifiers without its openai<3
    # pin; AReaL without its torch<2.11 pin: torch stays
    peers = "pip install --quiet --no-deps openrlhf==0.11.2 verifiers==0.4.0 areal==1.0.4 -c constraints.txt"
    assert peers in commands
    later = commands[commands.index(peers) + 1:]
    assert later and all(c.endswith("torch==2.13.0 -c constraints.txt") for c in later)
    assert "openai>=3,<4" in later[0].split()


def test_an_unknown_option_exits_2():
    done = subprocess.run(["bash", str(ROOT / "scripts" / "install.sh"), "--tset"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "unknown option --tset" in done.stderr


def test_both_installs_take_every_version_from_the_one_recorded_stack():
    for commands in (_commands(), _commands("--test")):
        installs = [c for c in commands if c.startswith("pip install") and "--upgrade pip" not in c]
        assert installs and all(c.endswith(" -c constraints.txt") for c in installs)


def test_the_recorded_stack_pins_the_peers_and_torch_exactly():
    lines = [line for line in (ROOT / "constraints.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    pins = dict(line.split("==", 1) for line in lines)
    assert len(pins) == len(lines)  # every line an exact pin, each package once
    assert (pins["torch"], pins["verl"], pins["trl"]) == ("2.13.0", "0.9.1", "1.16.0")
    assert not any(name.startswith("verl-rewards") for name in pins)  # our own packages are not pinned
