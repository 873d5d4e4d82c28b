"""The ship_package cache: only a private, intact tree of this user's is ever imported."""

from __future__ import annotations

import hashlib
import importlib
import io
import logging
import os
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from pathlib import Path

import pytest

from verl_rewards import RewardRef
from verl_rewards.errors import ExecutorError
from verl_rewards.executors import shipping


def archive(module: str, value: str) -> bytes:
    """A shipped package ``module`` whose ``score.VALUE`` is ``value``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(f"{module}/__init__.py", "")
        zf.writestr(f"{module}/score.py", f"VALUE = {value!r}\n")
    return buffer.getvalue()


def plant(root: Path, module: str, value: str) -> None:
    """What an attacker (or a broken earlier run) leaves: the package with other code."""
    (root / module).mkdir(parents=True)
    (root / module / "__init__.py").write_text("")
    (root / module / "score.py").write_text(f"VALUE = {value!r}\n")


def imported_value(module: str) -> str:
    importlib.invalidate_caches()
    value: str = importlib.import_module(f"{module}.score").VALUE
    return value


@pytest.fixture
def tmpdir_(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary directory of the test's own, as the system one; sys.path restored."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sys, "path", list(sys.path))
    return tmp_path


@pytest.fixture
def module() -> str:
    return f"plug_ship_{uuid.uuid4().hex[:8]}"


def shared_name(tmp: Path) -> Path:
    return tmp / f"verl_rewards_shipped-{os.geteuid()}"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_shipped_package_imports_under_its_real_name(tmpdir_: Path, module: str) -> None:
    target = shipping.unpack(archive(module, "genuine"))
    assert imported_value(module) == "genuine"
    assert target.parent == shared_name(tmpdir_) and (target.parent.stat().st_mode & 0o777) == 0o700


def test_an_intact_cached_tree_is_reused_not_unpacked_again(tmpdir_: Path, module: str) -> None:
    data = archive(module, "genuine")
    first = shipping.unpack(data)
    inode = (first / module / "score.py").stat().st_ino
    assert shipping.unpack(data) == first
    assert (first / module / "score.py").stat().st_ino == inode


@pytest.mark.skipif(os.geteuid() != 0, reason="planting as another user needs root to chown")
def test_a_cache_directory_planted_by_another_user_is_never_imported(
    tmpdir_: Path, module: str, caplog: pytest.LogCaptureFixture
) -> None:
    data = archive(module, "genuine")
    planted = shared_name(tmpdir_)
    plant(planted / digest(data), module, "attacker")
    for path in (planted, *planted.rglob("*")):
        os.lchown(path, 4242, 4242)
    planted.chmod(0o700)
    with caplog.at_level(logging.WARNING, logger=shipping.__name__):
        target = shipping.unpack(data)
    assert imported_value(module) == "genuine"
    assert planted not in target.parents
    assert "belongs to uid 4242" in caplog.text


def test_a_cache_directory_open_to_others_is_never_imported(
    tmpdir_: Path, module: str, caplog: pytest.LogCaptureFixture
) -> None:
    data = archive(module, "genuine")
    planted = shared_name(tmpdir_)
    plant(planted / digest(data), module, "attacker")
    planted.chmod(0o777)
    with caplog.at_level(logging.WARNING, logger=shipping.__name__):
        target = shipping.unpack(data)
    assert imported_value(module) == "genuine"
    assert planted not in target.parents and "its mode is 0777" in caplog.text


def test_a_symlinked_cache_directory_is_never_followed(tmpdir_: Path, module: str) -> None:
    data = archive(module, "genuine")
    elsewhere = tmpdir_ / "attacker"
    plant(elsewhere / digest(data), module, "attacker")
    elsewhere.chmod(0o700)
    shared_name(tmpdir_).symlink_to(elsewhere)
    target = shipping.unpack(data)
    assert imported_value(module) == "genuine"
    assert elsewhere not in target.resolve().parents


def test_a_shared_parent_without_the_sticky_bit_is_not_used_for_the_cache(
    tmpdir_: Path, module: str, caplog: pytest.LogCaptureFixture
) -> None:
    tmpdir_.chmod(0o777)  # anyone may rename entries here, ours included
    with caplog.at_level(logging.WARNING, logger=shipping.__name__):
        target = shipping.unpack(archive(module, "genuine"))
    assert imported_value(module) == "genuine"
    assert target.parent != shared_name(tmpdir_) and "not sticky" in caplog.text
    assert (target.parent.stat().st_mode & 0o777) == 0o700


def test_a_cached_tree_with_other_bytes_is_replaced(tmpdir_: Path, module: str) -> None:
    data = archive(module, "genuine")
    base = shared_name(tmpdir_)
    base.mkdir(mode=0o700)
    plant(base / digest(data), module, "tampered")
    (base / digest(data)).chmod(0o700)
    target = shipping.unpack(data)
    assert target == base / digest(data)
    assert imported_value(module) == "genuine"


def test_a_cached_tree_with_an_extra_module_is_replaced(tmpdir_: Path, module: str) -> None:
    data = archive(module, "genuine")
    first = shipping.unpack(data)
    (first / module / "extra.py").write_text("raise SystemExit('planted')\n")
    assert not shipping.matches(first, zipfile.ZipFile(io.BytesIO(data)))
    second = shipping.unpack(data)
    assert second == first and not (second / module / "extra.py").exists()


def test_pack_then_unpack_round_trips_a_real_distribution(tmpdir_: Path, make_dist) -> None:
    name = f"plug_rt_{uuid.uuid4().hex[:8]}"
    make_dist("round-trip-rewards", "1.0", {"rt": f"{name}.score:f"},
              {f"{name}/__init__.py": "", f"{name}/score.py": "def f(data_source, solution_str, ground_truth):\n"
                                                                "    return 0.25\n"})
    data = shipping.pack(RewardRef.from_config({"plugin": "rt"}))
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert sorted(zf.namelist()) == [f"{name}/__init__.py", f"{name}/score.py"]
    target = shipping.unpack(data)
    assert (target / name / "score.py").read_text().endswith("return 0.25\n")


def test_workers_unpacking_at_once_all_import_the_intact_package(tmpdir_: Path, module: str) -> None:
    blob = tmpdir_ / "package.zip"
    blob.write_bytes(archive(module, "genuine"))
    code = (
        "import importlib, pathlib, sys\n"
        "from verl_rewards.executors.shipping import unpack\n"
        f"unpack(pathlib.Path({str(blob)!r}).read_bytes())\n"
        f"print(importlib.import_module('{module}.score').VALUE)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmpdir_)}
    started = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(6)]
    outputs = [proc.communicate(timeout=60)[0] for proc in procs]
    assert outputs == ["genuine\n"] * 6 and [p.returncode for p in procs] == [0] * 6
    assert time.monotonic() - started < 60
    leftovers = sorted(p.name for p in shared_name(tmpdir_).iterdir())
    assert leftovers == [digest(blob.read_bytes())]


def _plugin_package(make_dist, entry: str) -> Path:
    """A real installed plugin ``entry`` whose package is a directory; returns that directory."""
    name = f"plug_{entry}_{uuid.uuid4().hex[:8]}"
    info = make_dist(f"{entry}-rewards", "1.0", {entry: f"{name}.score:f"},
                     {f"{name}/__init__.py": "", f"{name}/score.py": "def f(data_source, solution_str, "
                                                                      "ground_truth):\n    return 1.0\n"})
    return info.parent / name


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_a_link_leaving_the_package_is_refused_not_shipped(tmpdir_: Path, make_dist, kind: str) -> None:
    package = _plugin_package(make_dist, f"leak_{kind}")
    outside = tmpdir_ / "outside"
    outside.mkdir()
    (outside / "shadow").write_text("root:$6$secret:19000:0:99999:7:::\n")
    link = package / ("shadow" if kind == "file" else "data")
    link.symlink_to(outside / "shadow" if kind == "file" else outside)
    with pytest.raises(ExecutorError) as info:
        shipping.pack(RewardRef.from_config({"plugin": f"leak_{kind}"}))
    target = outside / "shadow" if kind == "file" else outside
    assert f"{link} is a link to {target}, outside its package {package}" in str(info.value)
    assert "replace the link with a copy or remove it" in str(info.value)


def test_a_link_within_the_package_ships_the_linked_bytes(tmpdir_: Path, make_dist) -> None:
    package = _plugin_package(make_dist, "inner")
    (package / "alias.py").symlink_to(package / "score.py")
    data = shipping.pack(RewardRef.from_config({"plugin": "inner"}))
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.read(f"{package.name}/alias.py") == (package / "score.py").read_bytes()


def test_a_directory_link_back_up_the_package_is_refused(tmpdir_: Path, make_dist) -> None:
    package = _plugin_package(make_dist, "loop")
    (package / "again").symlink_to(package)
    with pytest.raises(ExecutorError, match="again is a link to"):
        shipping.pack(RewardRef.from_config({"plugin": "loop"}))


def test_a_huge_sparse_file_is_refused_by_its_unpacked_size(tmpdir_: Path, make_dist) -> None:
    package = _plugin_package(make_dist, "sparse")
    with (package / "weights.bin").open("wb") as f:
        f.truncate(1024**3)  # 1 GiB that zips to about 1 MB
    started = time.monotonic()
    with pytest.raises(ExecutorError) as info:
        shipping.pack(RewardRef.from_config({"plugin": "sparse"}))
    total = sum(p.stat().st_size for p in package.iterdir() if p.is_file())
    assert (f"its files come to {total} bytes unpacked (limit {shipping.MAX_UNPACKED_BYTES}; "
            f"the largest is {package.name}/weights.bin, {1024**3} bytes)") in str(info.value)
    assert time.monotonic() - started < 30  # refused from the sizes, not after compressing 1 GiB


def _zeros_archive(path: Path, module: str, size: int) -> bytes:
    """A package whose data file holds ``size`` zero bytes (it zips to about size/1000)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{module}/__init__.py", "")
        with zf.open(f"{module}/zeros.bin", "w") as sink:
            for _ in range(size // (1024 * 1024)):
                sink.write(bytes(1024 * 1024))
    return path.read_bytes()


def test_an_archive_over_the_unpacked_limit_is_refused_and_leaves_nothing(tmpdir_: Path, module: str) -> None:
    data = _zeros_archive(tmpdir_ / "bomb.zip", module, 4 * 1024 * 1024)
    assert len(data) < 64 * 1024
    with pytest.raises(ExecutorError, match=f"unpacks to {4 * 1024 * 1024} bytes"):
        shipping.unpack(data, max_unpacked=1024 * 1024)
    assert not shared_name(tmpdir_).exists() or list(shared_name(tmpdir_).iterdir()) == []


def test_an_archive_with_a_name_leaving_the_target_is_refused(tmpdir_: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("../../escaped.py", "x = 1\n")
    with pytest.raises(ExecutorError, match="unsafe file name: '../../escaped.py'"):
        shipping.unpack(buffer.getvalue())
    assert not (tmpdir_ / "escaped.py").exists()


def test_unpacking_streams_a_large_file_without_holding_it_in_memory(tmpdir_: Path, module: str) -> None:
    size = 128 * 1024 * 1024
    blob = tmpdir_ / "big.zip"
    _zeros_archive(blob, module, size)
    code = (
        "import pathlib, resource\n"
        "from verl_rewards.executors.shipping import unpack\n"
        f"data = pathlib.Path({str(blob)!r}).read_bytes()\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "target = unpack(data)\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        f"print(after - before, (target / {module!r} / 'zeros.bin').stat().st_size)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmpdir_)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    grown_kib, written = map(int, done.stdout.split())
    assert written == size
    assert grown_kib < 32 * 1024, f"peak memory grew by {grown_kib} KiB while unpacking"


def test_an_archive_naming_a_file_twice_is_refused(tmpdir_: Path, module: str) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(f"{module}/score.py", "VALUE = 'first'\n")
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr(f"{module}/score.py", "VALUE = 'second'\n")
    with pytest.raises(ExecutorError, match=f"names '{module}/score.py' twice"):
        shipping.unpack(buffer.getvalue())
