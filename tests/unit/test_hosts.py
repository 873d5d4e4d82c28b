"""hosts: the one table of what each host does with ``on_error: skip``,
read by every adapter and serve endpoint, and docs/skip.md's copy of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from verl_rewards.errors import ConfigError
from verl_rewards.hosts import HOSTS, check_skip, markdown_table, refusal
from verl_rewards.serve.protocols import PROTOCOLS, protocols_for
from verl_rewards.testing._hosts import HOSTS as CONFORMANCE_HOSTS

ROOT = Path(__file__).resolve().parents[2]
START, END = "<!-- skip-table: start -->\n", "<!-- skip-table: end -->"


def test_docs_skip_md_shows_the_table_the_adapters_read():
    text = (ROOT / "docs/skip.md").read_text()
    shown = text[text.index(START) + len(START): text.index(END)]
    assert shown == markdown_table(), (
        "docs/skip.md's table differs from hosts.py: paste in the output of "
        "python -c 'from verl_rewards.hosts import markdown_table as t; print(t(), end=\"\")'")


def test_every_adapter_and_endpoint_has_a_row():
    adapters = {h.name for h in CONFORMANCE_HOSTS}
    endpoints = {p.host for p in PROTOCOLS.values()}
    assert adapters | endpoints | {"verl_legacy"} <= set(HOSTS)
    assert all(p.host for p in PROTOCOLS.values())


def test_a_refusing_host_says_why_and_what_to_use():
    for host, row in HOSTS.items():
        assert row.reason and row.failed_sample
        assert bool(row.instead) == (row.policy == "refuse"), host
        assert bool(row.counted) == (row.policy != "refuse"), host
    assert refusal("openrlhf") == (
        "on_error: skip is refused in OpenRLHF 0.11.2 reward file: OpenRLHF has no per-sample "
        "drop: a reward it cannot read fails the whole batch, and its dynamic filtering drops "
        "whole groups by their mean score. Use VERL_REWARDS_ON_ERROR=score, which logs each "
        "failed sample as reward_failed. See docs/skip.md")


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_check_skip_refuses_skip_only_where_the_host_cannot_drop_a_sample(host):
    for on_error in ("score", "raise"):
        check_skip(host, on_error)
    if HOSTS[host].policy == "refuse":
        with pytest.raises(ConfigError) as refused:
            check_skip(host, "skip")
        assert str(refused.value) == refusal(host)
    else:
        check_skip(host, "skip")


def test_under_skip_the_endpoints_whose_host_cannot_drop_a_sample_refuse_every_request():
    refusing = {path for path, p in protocols_for("skip", {}).items()
                if HOSTS[p.host].policy == "refuse"}
    assert refusing == {"/openrlhf", "/slime"}
    assert {p.host for p in protocols_for("score", {}).values()} == {p.host for p in PROTOCOLS.values()}
