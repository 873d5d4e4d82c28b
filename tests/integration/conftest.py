"""Fixtures the integration tests share: a second Ray node, a tokenizer and a model built
in code (nothing downloaded), a small real file system, the docs' integration examples,
``verl-rewards serve`` in a subprocess."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest

# Every word the verl tests' rows and responses use.
VERL_WORDS = ["42", "41", "7", "loop", "c_sleep", "exit", "raise", "nan", "hello"]


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A word-level tokenizer over VERL_WORDS, built in code and saved where verl's workers
    load it."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<pad>", "<eos>", "<unk>", *VERL_WORDS])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>",
                                   unk_token="<unk>")
    path = tmp_path_factory.mktemp("tokenizer")
    fast.save_pretrained(path)
    return path


@pytest.fixture
def tiny_llama() -> tuple[Any, Any]:
    """A one-layer random Llama and a character tokenizer, built in code: (model, tokenizer)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<bos>", "<eos>", "<unk>"]
    vocab = {t: i for i, t in enumerate(specials + sorted(set("0123456789+= ")))}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    core.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<bos>", eos_token="<eos>",
                                        pad_token="<pad>", unk_token="<unk>", padding_side="left")
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
        pad_token_id=0, bos_token_id=1, eos_token_id=2))
    return model, tokenizer


class RayNode(NamedTuple):
    """A Ray node a test started: its processes carry ``marker`` in their environment."""

    marker: bytes

    def processes(self, command: bytes = b"") -> list[int]:
        """The pids of this node's processes (whose command line holds ``command``)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if self.marker in (entry / "environ").read_bytes() and command in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
        return found


def _alive_nodes() -> set[str]:
    import ray

    return {n["NodeID"] for n in ray.nodes() if n["Alive"]}


@contextlib.contextmanager
def _second_node(extra_env: Mapping[str, str]) -> Iterator[RayNode]:
    import ray

    marker = f"VERL_REWARDS_TEST_NODE={uuid.uuid4().hex}"
    key, value = marker.split("=")
    node = RayNode(marker.encode())
    env = {**os.environ, key: value, **extra_env, "RAY_AUTH_MODE": "token"}
    before = _alive_nodes()
    ray_cli = Path(sys.executable).with_name("ray")
    # Its own temp dir: `ray start` records the cluster address there, and in the
    # default one it would make every later bare ray.init() on this machine join us.
    temp_dir = tempfile.mkdtemp(prefix="vr-node-")
    subprocess.run([str(ray_cli), "start", f"--address={ray.get_runtime_context().gcs_address}",
                    "--num-cpus=2", "--object-store-memory=100000000", f"--temp-dir={temp_dir}",
                    "--disable-usage-stats"], env=env, check=True, capture_output=True, timeout=120)
    try:
        deadline = time.monotonic() + 60
        # By id, not count: a node an earlier test killed may be declared dead meanwhile.
        while not _alive_nodes() - before and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(_alive_nodes() - before) == 1, "the second node never joined"
        yield node
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in node.processes():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + 15
            while node.processes() and time.monotonic() < deadline:
                time.sleep(0.2)
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.fixture
def second_node(ray_session: None) -> Iterator[RayNode]:
    """A second Ray node (2 CPUs) joined to the test session, with token auth as the session
    has it; stops exactly its processes at the end."""
    with _second_node({}) as node:
        yield node


@pytest.fixture
def killable_second_node(ray_session: None) -> Iterator[RayNode]:
    """:func:`second_node`, whose workers testkit's ``node_killer`` reward may kill."""
    with _second_node({"VERL_REWARDS_TEST_KILLABLE_NODE": "1"}) as node:
        yield node


@pytest.fixture
def make_tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Mount a real tmpfs of ``size`` (``mount -o size=``; the tests run as root, as CI
    does) under ``tmp_path``; every one is unmounted afterwards."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        disk = tmp_path / f"disk{len(mounted) or ''}"
        disk.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)], check=True)
        mounted.append(disk)
        return disk

    try:
        yield mount
    finally:
        for disk in mounted:
            subprocess.run(["umount", "-l", str(disk)], check=True)


@pytest.fixture
def run_docs_example(capsys: pytest.CaptureFixture[str]) -> Callable[[str], tuple[list[str], list[str]]]:
    """Run the first ``python`` block of docs/integrations/NAME.md; return the lines it
    printed and the ones its ``print(...)  # expected`` comments claim."""
    docs = Path(__file__).parents[2] / "docs" / "integrations"

    def run(name: str) -> tuple[list[str], list[str]]:
        block = re.findall(r"```python\n(.*?)```", (docs / f"{name}.md").read_text(), flags=re.S)[0]
        capsys.readouterr()
        exec(compile(block, f"{name}.md", "exec"), {})
        claims = re.findall(r"^print\(.*?\)\s*#\s*(.*)$", block, flags=re.M)
        return capsys.readouterr().out.splitlines(), claims

    return run


class ServeProcess(NamedTuple):
    """A ``verl-rewards serve`` a test started."""

    proc: subprocess.Popen[str]
    url: str
    lines: list[str]  # stdout so far


def _launch_serve(args: Sequence[str], env: Mapping[str, str], timeout_s: float,
                  ready: Callable[[ServeProcess], bool] = lambda server: True) -> ServeProcess:
    cli = str(Path(sys.executable).with_name("verl-rewards"))
    proc = subprocess.Popen([cli, "serve", "--port", "0", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=dict(env))
    lines: list[str] = []
    found: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "listening on " in line:
                found.put(line.split("listening on ")[1].split()[0])

    threading.Thread(target=pump, daemon=True).start()
    try:
        url = found.get(timeout=timeout_s)
    except queue.Empty:
        proc.kill()
        raise AssertionError(f"the server did not start: {''.join(lines)}") from None
    server = ServeProcess(proc, url, lines)
    deadline = time.monotonic() + timeout_s
    while not ready(server):
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"never ready: {''.join(lines)}")
        time.sleep(0.1)
    return server


def _stop_serve(server: ServeProcess, timeout_s: float = 60.0, sig: int = signal.SIGTERM) -> int:
    server.proc.send_signal(sig)
    try:
        return server.proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait(10)
        raise AssertionError(f"no exit within {timeout_s} s of SIGTERM") from None


@pytest.fixture(scope="session")
def launch_serve() -> Callable[..., ServeProcess]:
    """Start ``verl-rewards serve --port 0 ARGS`` with ``env``; return once it says where it
    listens and ``ready(server)`` holds (killed, and the test failed with its output, if not
    within ``timeout_s``)."""
    return _launch_serve


@pytest.fixture(scope="session")
def stop_serve() -> Callable[..., int]:
    """SIGTERM (or ``sig=``) a served process, then its exit code (killed and failed if it
    does not exit within ``timeout_s``)."""
    return _stop_serve
