"""dispatch: the timeout rule, and `show` agreeing with what the runtime does."""

from __future__ import annotations

import json
import time

import pytest

from verl_rewards import Scorer, load_config
from verl_rewards.cli.main import main
from verl_rewards.dispatch import loaded_rewards, resolve_spec
from verl_rewards.limits import Limits, limits_for, longest
from verl_rewards.spec import spec_from_config

DECLARED = '''
    from verl_rewards import reward

    @reward(timeout_s=0.4)
    def hang(data_source, solution_str, ground_truth, extra_info=None):
        while solution_str == "hang":  # a Python hang: the watchdog interrupts it
            pass
        return 1.0

    def plain(data_source, solution_str, ground_truth, extra_info=None):
        return 0.5
'''


@pytest.fixture
def timed_dist(make_dist):
    make_dist("timed-rewards", "1.0", {"hang": "plug_timed:hang", "plain": "plug_timed:plain"},
              {"plug_timed.py": DECLARED})


def test_unset_timeout_means_declared_else_default(timed_dist):
    assert limits_for(load_config({"plugin": "hang"})) == Limits(30.0, 32, use_declared=True)
    for plugin, expected in (("hang", 0.4), ("plain", 30.0)):
        config = load_config({"plugin": plugin})
        assert longest(limits_for(config), loaded_rewards(resolve_spec(spec_from_config(config)))) == expected


def test_a_set_timeout_overrides_the_declared_one_and_null_means_none(timed_dist):
    for value, expected in ((5, 5), (None, None)):
        config = load_config({"plugin": "hang", "timeout_s": value})
        assert longest(limits_for(config), loaded_rewards(resolve_spec(spec_from_config(config)))) == expected


def test_show_and_the_scorer_agree_on_a_declared_timeout(timed_dist, capsys):
    assert main(["show", "hang", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["timeout_s"]
    began = time.monotonic()
    with Scorer.from_config({"plugin": "hang", "executor": "local"}) as scorer:
        result = scorer.score([{"data_source": "d", "solution_str": "hang", "ground_truth": ""}])
    assert shown == 0.4 and result.errors == [f"SampleTimeout: exceeded timeout_s={shown}"]
    assert time.monotonic() - began < 3


def test_each_component_of_a_composite_gets_its_own_declared_timeout(timed_dist):
    config = load_config({"rewards": {"h": {"plugin": "hang"}, "p": {"plugin": "plain"}},
                          "executor": "local"})
    with Scorer.from_config(config) as scorer:
        result = scorer.score([{"data_source": "d", "solution_str": "hang", "ground_truth": ""}])
    assert result.errors == ["[h] SampleTimeout: exceeded timeout_s=0.4"]
    assert longest(limits_for(config), loaded_rewards(resolve_spec(spec_from_config(config)))) == 30.0


def test_timeout_s_must_be_seconds_auto_or_null():
    from verl_rewards.errors import ConfigError

    with pytest.raises(ConfigError, match=r"timeout_s must be a positive number of seconds, 'auto' "
                                          r"\(the plugin's declared timeout, else 30 s\) or null"):
        load_config({"plugin": "x", "timeout_s": "soon"})
