"""serve.runner and ``verl-rewards serve``'s checks before anything starts: the address is
bound first (a taken one is a runtime error, exit 1), the local executor only in --dev,
the byte bound at least one body, the serve extra named when it is missing."""

from __future__ import annotations

import socket
import sys

import pytest

from verl_rewards.cli.main import main
from verl_rewards.config import load_config
from verl_rewards.errors import BindError, ConfigError
from verl_rewards.samples import as_samples
from verl_rewards.serve.runner import bind, check_pool, describe_pool
from verl_rewards.serve.settings import ServeSettings


def test_a_taken_port_is_a_bind_error_naming_the_address_and_the_fix():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(BindError, match=rf"cannot listen on 127.0.0.1:{port}: Address already in use; "
                                            r"choose another --port \(0 picks a free one\) or --host"):
            bind("127.0.0.1", port)


def test_port_0_binds_one_free_port_for_every_address_of_the_host():
    sockets = bind("localhost", 0)
    try:
        ports = {s.getsockname()[1] for s in sockets}
        assert len(ports) == 1 and ports != {0}
    finally:
        for s in sockets:
            s.close()


def test_an_unknown_host_is_a_bind_error():
    with pytest.raises(BindError, match="cannot listen on no-such-host.invalid:0: .*choose another --host"):
        bind("no-such-host.invalid", 0)


def test_the_local_executor_needs_dev_mode_and_ray_does_not():
    local = load_config({"plugin": "exact_match", "executor": "local"})
    with pytest.raises(ConfigError, match=r"reward.executor=local scores in the server process: a reward "
                                          r"stuck in C blocks every request .* add --dev"):
        check_pool(ServeSettings(), local)
    check_pool(ServeSettings(dev=True), local)
    check_pool(ServeSettings(), load_config({"plugin": "exact_match", "executor": "ray"}))
    with pytest.raises(ConfigError, match="--shared-pool needs reward.executor=ray"):
        check_pool(ServeSettings(dev=True), load_config({"plugin": "exact_match", "executor": "local",
                                                         "share_pool": "cluster"}))


def test_the_process_executor_serves_without_dev_but_cannot_be_a_cluster_pool():
    process = load_config({"plugin": "exact_match", "executor": "process"})
    check_pool(ServeSettings(), process)
    assert describe_pool(process) == "process executor, 2 worker processes (this machine)"
    with pytest.raises(ConfigError, match="--shared-pool needs reward.executor=ray \\(a process executor"):
        check_pool(ServeSettings(), load_config({"plugin": "exact_match", "executor": "process",
                                                 "share_pool": "cluster"}))


def test_serve_refuses_the_local_executor_without_dev_before_listening(capsys):
    assert main(["serve", "--port", "0", "reward.plugin=exact_match", "reward.executor=local"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("verl-rewards: error: reward.executor=local scores in the server process")


def test_a_byte_bound_below_one_body_is_a_usage_error(capsys):
    assert main(["serve", "--max-queue-mb", "8", "reward.plugin=exact_match"]) == 2
    assert ("--max-queue-mb (8) is below --max-body-mb (16): a request of the largest size could never "
            "be admitted" in capsys.readouterr().err)


def test_without_the_serve_extra_the_error_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "aiohttp", None)  # as if not installed: import raises
    assert main(["serve", "reward.plugin=exact_match"]) == 2
    err = capsys.readouterr().err
    assert "verl-rewards serve needs aiohttp and prometheus_client" in err
    assert "pip install 'verl-rewards[serve]'" in err


def test_the_command_line_defaults_are_the_settings_defaults():
    from verl_rewards.cli.main import build_parser
    from verl_rewards.serve.settings import MIB

    args = build_parser("serve").parse_args(["serve"])
    d = ServeSettings()
    assert (args.host, args.port, args.max_samples, args.max_queue, args.max_batch, args.drain_timeout,
            args.dev) == (d.host, d.port, d.max_samples, d.max_queue, d.max_batch, d.drain_timeout_s, d.dev)
    assert (args.max_body_mb * MIB, args.max_queue_mb * MIB) == (d.max_body_bytes, d.max_queue_bytes)


def test_the_pool_is_built_from_the_commands_scorer_without_inspecting_the_reward_again(monkeypatch):
    import verl_rewards.scorer as scorer_module
    from verl_rewards import Scorer
    from verl_rewards.serve.runner import scorer_factory

    calls: list[str] = []
    real = scorer_module.preflight
    monkeypatch.setattr(scorer_module, "preflight", lambda spec, config: calls.append("preflight") or
                        real(spec, config))
    scorer = Scorer.from_config({"plugin": "exact_match", "executor": "local"})
    build = scorer_factory(scorer)
    pools = [build(), build()]  # the first pool, and its replacement after a failure
    try:
        assert pools[0].score(as_samples([{"data_source": "d", "solution_str": "1", "ground_truth": "1"}])).scores == [1.0]
    finally:
        for pool in pools:
            pool.close()
    assert calls == ["preflight"]
