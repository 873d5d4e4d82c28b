"""The conformance kit on the first-party plugins: every installed host agrees."""

from __future__ import annotations

import os

import pytest

from verl_rewards.testing._hosts import HOSTS
from verl_rewards.testing.conformance import (
    ConformanceError,
    assert_conformant,
    run_conformance,
)

ALL_HOSTS = {h.name for h in HOSTS}


# Each host's default executor starts fresh worker processes for every section it scores
# (three or more per plugin and host), which import the plugin again: seconds for nltk,
# reasoning-gym, SymPy or the sandbox, and still about 2 s a plugin for the light ones.
# A plugin's scores do not depend on the executor, so one plugin takes each host's default
# path (with the kit's own tests below, which all run on it) and the rest score in this
# process, imported once.
ON_HOST_DEFAULTS = {"gsm8k"}


@pytest.mark.slow
@pytest.mark.parametrize("plugin", [
    "gsm8k", "math_boxed", "think_answer_format", "code_exec", "ifeval", "verl_default",
    "qa_em", "qa_f1", "reasoning_gym", "cosine_length", "repetition_penalty", "tag_count", "reasoning_steps",
])
def test_a_first_party_plugin_scores_the_same_in_every_host(plugin):
    executor = None if plugin in ON_HOST_DEFAULTS else "local"
    report = assert_conformant(plugin, probe_timeout_s=0.5, executor=executor)  # the hang probe spins a core
    assert set(report.hosts) == ALL_HOSTS  # every host is a test dependency: none skipped
    assert report.missing == () and report.examples >= 5


def test_a_plugin_that_differs_from_its_examples_is_reported_per_host(make_dist):
    make_dist("liar-rewards", "1.0", {"liar": "plug_liar:score"}, {"plug_liar.py": '''
        from verl_rewards.metadata import Example, reward

        @reward(examples=[Example(solution_str="a", ground_truth="a", expected=1.0)])
        def score(data_source, solution_str, ground_truth, extra_info=None):
            return 0.5
    '''})
    report = run_conformance("liar", hosts=["slime", "skyrl"])
    assert report.hosts == ("slime", "skyrl") and not report.ok
    assert report.problems == (
        "slime: example 1 ('a') scored 0.5, expected 1.0",
        "skyrl: example 1 ('a') scored 0.5, expected 1.0",
    )
    with pytest.raises(ConformanceError, match="liar: NOT conformant in slime, skyrl"):
        assert_conformant("liar", hosts=["slime", "skyrl"])


def test_an_executor_given_is_the_one_every_host_scores_on(make_dist):
    make_dist("where-rewards", "1.0", {"where_scored": "plug_where:score"}, {"plug_where.py": f'''
        import os

        from verl_rewards.metadata import Example, reward

        @reward(examples=[Example(solution_str="a", ground_truth="a", expected=1.0)])
        def score(data_source, solution_str, ground_truth, extra_info=None):
            return float(os.getpid() == {os.getpid()})  # 1.0 only in the test's process
    '''})
    hosts = ["trl", "openrlhf", "slime"]
    assert run_conformance("where_scored", hosts=hosts, executor="local", probe_timeout_s=1.0).ok
    by_default = run_conformance("where_scored", hosts=hosts, probe_timeout_s=1.0)
    assert by_default.problems == (  # their default: worker processes beside the caller
        "trl: example 1 ('a') scored 0.0, expected 1.0",
        "openrlhf: example 1 ('a') scored 0.0, expected 1.0",
        "slime: example 1 ('a') scored 0.0, expected 1.0",
    )


def test_extra_info_reaches_the_plugin_in_every_host_that_carries_it(make_dist):
    make_dist("info-rewards", "1.0", {"info_level": "plug_info:score"}, {"plug_info.py": '''
        from verl_rewards.metadata import Example, reward

        @reward(examples=[Example(solution_str="a", ground_truth="a", expected=2.0,
                                  extra_info={"level": 2})])
        def score(data_source, solution_str, ground_truth, extra_info=None):
            return float((extra_info or {}).get("level", 0))
    '''})
    hosts = ["verl_function", "trl", "openrlhf", "verifiers", "skyrl", "slime"]
    report = assert_conformant("info_level", hosts=hosts)
    assert report.hosts == tuple(hosts)


def test_the_callers_own_reward_variables_do_not_leak_into_a_run(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_match")
    monkeypatch.setenv("VERL_REWARDS_DATA_SOURCE", "elsewhere")
    report = assert_conformant("think_answer_format", hosts=["openrlhf", "slime"], probe_timeout_s=1.0)
    assert report.hosts == ("openrlhf", "slime")
    assert os.environ["VERL_REWARDS_PLUGIN"] == "exact_match"
    assert "VERL_REWARDS_CONFIG" not in os.environ


def test_a_plugin_without_examples_is_refused(make_dist):
    make_dist("mute-rewards", "1.0", {"mute": "plug_mute:score"}, {"plug_mute.py": '''
        def score(data_source, solution_str, ground_truth, extra_info=None):
            return 1.0
    '''})
    with pytest.raises(ConformanceError, match="declares no self-test examples"):
        assert_conformant("mute", hosts=["slime"])


def test_an_unknown_host_is_refused():
    with pytest.raises(ValueError, match="unknown host"):
        run_conformance("gsm8k", hosts=["megatron"])
