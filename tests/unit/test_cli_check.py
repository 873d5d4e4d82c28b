"""`verl-rewards check` and :mod:`verl_rewards.checking`, which it shares with
the pytest plugin: import, validate the shape, run the self-test examples."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from verl_rewards.checking import CheckReport, check_named, check_plugins, load_for_inspection
from verl_rewards.cli.main import main
from verl_rewards.discovery import select
from verl_rewards.errors import ConfigError, PluginNotFoundError, PluginShapeError
from verl_rewards.pytest_plugin import assert_plugin_ok

TESTKIT = "verl-rewards-testkit"

DECORATED = """
from verl_rewards import Example, reward

@reward(examples=[
    Example(solution_str="a", ground_truth="a", expected=1.0),
    Example(solution_str="b", ground_truth="a", expected=0.0),
    Example(solution_str="a", ground_truth="a", expected=3.0, kwargs={"bonus": 2.0}),
])
def good(data_source, solution_str, ground_truth, extra_info=None, bonus=0.0):
    return float(solution_str == ground_truth) + bonus

@reward(examples=[
    Example(solution_str="a", ground_truth="a", expected=1.0),
    Example(solution_str="b", ground_truth="a", expected=1.0),
    Example(solution_str="raise", ground_truth="a", expected=1.0),
    Example(solution_str="a", ground_truth="a", expected=1.0, kwargs={"nope": 1}),
])
def wrong(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "raise":
        raise ValueError("cannot parse the answer")
    return float(solution_str == ground_truth)

@reward(timeout_s=0.3, examples=[Example(solution_str="a", ground_truth="a", expected=1.0)])
def stuck(data_source, solution_str, ground_truth, extra_info=None):
    while True:
        pass

@reward(examples=[Example(solution_str="a", ground_truth="a", expected=1.0)])
def returns_none(data_source, solution_str, ground_truth, extra_info=None):
    return None

@reward(examples=[
    Example(solution_str="a", ground_truth="a", expected=0.5, kwargs={"url": "http://judge", "weight": 0.5}),
    Example(solution_str="b", ground_truth="a", expected=0.0, kwargs={"url": "http://judge"}),
])
class Judge:
    def __init__(self, url, weight=1.0):
        self.url, self.weight = url, weight
    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        return self.weight * float(solution_str == ground_truth)

@reward(examples=[Example(solution_str="a", ground_truth="a", expected=1.0)])
class NeedsUrl(Judge):
    pass

NOT_CALLABLE = 42

def too_few(data_source):
    return 1.0
"""


def _ep(**names: str) -> str:
    return "[verl_rewards]\n" + "".join(f"{k} = {v}\n" for k, v in names.items())


def _line_of(text: str) -> int:
    """The line of plug_acme.py (DECORATED) that holds ``text``."""
    lines = textwrap.dedent(DECORATED).splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


@pytest.fixture
def acme(make_dist):
    """A real installed distribution with good, wrong and broken plugins."""
    return make_dist("acme-rewards", "1.0", _ep(
        good="plug_acme:good", wrong="plug_acme:wrong", stuck="plug_acme:stuck",
        returns_none="plug_acme:returns_none", not_callable="plug_acme:NOT_CALLABLE",
        too_few="plug_acme:too_few", missing_attr="plug_acme:nowhere",
        judge="plug_acme:Judge", needs_url="plug_acme:NeedsUrl",
        broken="plug_acme_broken:f",
    ), {"plug_acme.py": DECORATED, "plug_acme_broken.py": "import numpyy_not_installed\n"})


def _report(name: str) -> CheckReport:
    return check_named(f"acme-rewards:{name}")


def test_a_passing_plugin_reports_its_shape_and_examples():
    record = select("exact_match")
    assert check_named("exact_match") == CheckReport(
        plugin=record, ok=True, problems=(), examples_run=2, shape="sample, sync function")


def test_examples_bind_their_kwargs_into_the_reward(acme):
    report = _report("good")
    assert (report.ok, report.problems, report.examples_run) == (True, (), 3)


def test_a_class_whose_constructor_needs_kwargs_is_checked_with_its_examples_kwargs(acme):
    report = _report("judge")
    assert (report.ok, report.examples_run, report.shape) == (True, 2, "sample, sync class")


def test_check_and_show_load_a_class_needing_kwargs_the_same_way(acme, capsys):
    loaded = load_for_inspection(select("acme-rewards:judge"))
    assert loaded.is_class and (loaded.call.url, loaded.call.weight) == ("http://judge", 0.5)
    assert main(["show", "acme-rewards:judge"]) == 0  # show uses the same loader
    assert "  shape:        sample, sync class" in capsys.readouterr().out.splitlines()
    with pytest.raises(PluginShapeError, match=r"cannot construct NeedsUrl\(\*\*reward.kwargs\)"):
        load_for_inspection(select("acme-rewards:needs_url"))  # the bare load's error


def test_a_class_needing_kwargs_that_no_example_supplies_fails_naming_the_constructor(acme):
    report = _report("needs_url")
    assert not report.ok and report.examples_run == 0
    assert "cannot construct NeedsUrl(**reward.kwargs)" in report.problems[0]


def test_every_failing_example_is_a_problem(acme):
    report = _report("wrong")
    assert not report.ok and report.examples_run == 4
    assert report.problems[0] == "example 2 (solution_str='b', ground_truth='a'): expected 1.0, got 0.0"
    assert report.problems[1].startswith("example 3 (solution_str='raise', ground_truth='a'): "
                                         "ValueError: cannot parse the answer (at ")
    assert report.problems[2].startswith(
        "example 4 (solution_str='a', ground_truth='a', kwargs={'nope': 1}): cannot bind kwargs "
        "{'nope': 1}: cannot load reward wrong (acme-rewards 1.0): signature")
    assert len(report.problems) == 3


def test_an_example_that_hangs_times_out(acme):
    report = _report("stuck")
    assert report.problems == ("example 1 (solution_str='a', ground_truth='a'): "
                               "SampleTimeout: exceeded timeout_s=0.3",)


def test_an_invalid_return_value_fails(acme):
    (problem,) = _report("returns_none").problems
    assert "returned an invalid value for sample 0: expected a number, got NoneType" in problem


@pytest.mark.parametrize(("name", "cause"), [
    ("broken", "cannot load reward broken (acme-rewards 1.0): importing plug_acme_broken failed: "
               "it imports 'numpyy_not_installed' (at {site}/plug_acme_broken.py:1), which is not "
               "installed in this Python environment ({prefix}); install 'numpyy_not_installed' "
               "here, or correct the name: ModuleNotFoundError: No module named 'numpyy_not_installed'"),
    ("not_callable", "cannot load reward not_callable (acme-rewards 1.0): target is a int, "
                     "not a function or class"),
    ("missing_attr", "cannot load reward missing_attr (acme-rewards 1.0): plug_acme has no "
                     "attribute 'nowhere': AttributeError: module 'plug_acme' has no attribute "
                     "'nowhere'"),
])
def test_a_plugin_that_does_not_load_names_itself_its_dist_and_cause(acme, name, cause):
    report = _report(name)
    cause = cause.format(site=acme.parent, prefix=sys.prefix)
    assert report == CheckReport(plugin=report.plugin, ok=False, problems=(cause,),
                                 examples_run=0, shape=None)


def test_a_signature_that_fits_no_shape_fails(acme):
    (problem,) = _report("too_few").problems
    assert problem.startswith("cannot load reward too_few (acme-rewards 1.0): signature (data_source)")


def test_check_plugins_keeps_the_order_asked_and_drops_repeats():
    reports = check_plugins(["faulty", "exact_match", "faulty"])
    assert [r.plugin.name for r in reports] == ["faulty", "exact_match"]


def test_unknown_names_are_reported_together(acme):
    with pytest.raises(PluginNotFoundError, match="Did you mean 'exact_match'"):
        check_plugins(["exact_mach"])
    with pytest.raises(ConfigError) as raised:
        check_plugins(["exact_mach", "nope_at_all", "good"])
    assert "'exact_mach'" in str(raised.value) and "'nope_at_all'" in str(raised.value)


# -- the command --------------------------------------------------------------


def test_check_named_plugins_prints_a_report_per_plugin_and_exits_0(capsys):
    assert main(["check", "exact_match", "batch_exact"]) == 0
    assert capsys.readouterr().out == (
        f"ok   exact_match ({TESTKIT} 0.3.1): sample, sync function; 2/2 examples passed\n"
        f"ok   batch_exact ({TESTKIT} 0.3.1): batch, sync function; "
        "no self-test examples declared\n"
        "\n"
        "checked 2 plugin(s): 2 ok, 0 failed\n")


def test_a_failure_exits_1_naming_plugin_distribution_and_cause(capsys, acme):
    assert main(["check", "exact_match", "acme-rewards:broken", "acme-rewards:wrong"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"ok   exact_match ({TESTKIT} 0.3.1): sample, sync function; 2/2 examples passed",
        "FAIL broken (acme-rewards 1.0)",
        "     - cannot load reward broken (acme-rewards 1.0): importing plug_acme_broken failed: "
        f"it imports 'numpyy_not_installed' (at {acme.parent}/plug_acme_broken.py:1), which is not "
        f"installed in this Python environment ({sys.prefix}); install 'numpyy_not_installed' "
        "here, or correct the name: ModuleNotFoundError: No module named 'numpyy_not_installed'",
        "FAIL wrong (acme-rewards 1.0): sample, sync function; 1/4 examples passed",
        "     - example 2 (solution_str='b', ground_truth='a'): expected 1.0, got 0.0",
        "     - example 3 (solution_str='raise', ground_truth='a'): ValueError: cannot parse the answer"
        f" (at {importlib.import_module('plug_acme').__file__}:{_line_of('cannot parse')} in wrong)",
        "     - example 4 (solution_str='a', ground_truth='a', kwargs={'nope': 1}): cannot bind "
        "kwargs {'nope': 1}: cannot load reward wrong (acme-rewards 1.0): signature (data_source, "
        "solution_str, ground_truth, extra_info=None) cannot be called as fn(data_source, "
        "solution_str, ground_truth, extra_info=None, **kwargs) with reward.kwargs ['nope']: "
        "TypeError: got an unexpected keyword argument 'nope'",
        "",
        "checked 3 plugin(s): 1 ok, 2 failed",
    ]
    assert captured.err == ("verl-rewards: error: 2 plugin(s) failed check: "
                            "broken (acme-rewards 1.0), wrong (acme-rewards 1.0)\n")


def test_check_with_no_names_checks_every_installed_plugin(capsys, acme):
    # One run over everything installed: acme's broken plugins fail without
    # hiding the others. (Whatever else the user installed may pass or fail.)
    assert main(["check"]) == 1
    lines = capsys.readouterr().out.splitlines()
    for name in ("async_exact", "batch_exact", "exact_match", "faulty", "sleepy", "slow_cpu",
                 "stateful"):
        assert any(line.startswith(f"ok   {name} ({TESTKIT} 0.3.1): ") for line in lines)
    assert "FAIL broken (acme-rewards 1.0)" in lines
    assert any(line.startswith("ok   good (acme-rewards 1.0)") for line in lines)


def test_an_unknown_name_is_a_usage_error(capsys):
    assert main(["check", "exact_mach"]) == 2
    assert "Did you mean 'exact_match'" in capsys.readouterr().err


# -- the pytest plugin's helper runs the same check ---------------------------


def test_assert_plugin_ok_returns_the_report():
    assert assert_plugin_ok("exact_match") == check_named("exact_match")


def test_assert_plugin_ok_fails_the_test_with_the_report(acme):
    with pytest.raises(pytest.fail.Exception) as failed:
        assert_plugin_ok("acme-rewards:wrong")
    message = str(failed.value)
    assert message.startswith("verl-rewards check failed:\nFAIL wrong (acme-rewards 1.0)")
    assert "example 2 (solution_str='b', ground_truth='a'): expected 1.0, got 0.0" in message


def test_assert_plugin_ok_fails_for_an_unknown_name():
    with pytest.raises(pytest.fail.Exception, match="no reward plugin named 'nope_at_all'"):
        assert_plugin_ok("nope_at_all")


def test_the_fixture_is_registered_for_every_session(request):
    check = request.getfixturevalue("verl_reward_check")
    assert check is assert_plugin_ok
    assert check("exact_match").ok


# -- quiet: what plugins print is held back -----------------------------------

NOISY = """
import logging, os, sys, warnings

from tqdm import tqdm

from verl_rewards import Example, reward

_log = logging.getLogger("noisy_model")
_log.handlers[:] = [logging.StreamHandler(sys.stderr)]  # bound now, as libraries' handlers are
print("loading weights...")
os.write(2, b"C-level banner on fd 2\\n")

@reward(examples=[Example(solution_str="a", ground_truth="a", expected=1.0)])
class Loud:
    def __init__(self):
        for _ in tqdm(range(3), desc="Loading checkpoint shards"):
            pass
        _log.warning("some weights were not initialized")
        warnings.warn("this model is deprecated", UserWarning)

    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        print("scoring", solution_str)
        return float(solution_str == ground_truth)

@reward(examples=[Example(solution_str="a", ground_truth="a", expected=0.5)])
def loud_and_wrong(data_source, solution_str, ground_truth, extra_info=None):
    print("about to be wrong")
    return 1.0
"""


@pytest.fixture
def noisy(make_dist):
    make_dist("noisy-rewards", "1.0", _ep(loud="plug_noisy:Loud", loud_wrong="plug_noisy:loud_and_wrong"),
              {"plug_noisy.py": NOISY})


def test_check_is_quiet_while_plugins_load_and_run(capfd, noisy):
    assert main(["check", "loud"]) == 0
    captured = capfd.readouterr()
    assert captured.out == ("ok   loud (noisy-rewards 1.0): sample, sync class; 1/1 example passed\n"
                            "\nchecked 1 plugin(s): 1 ok, 0 failed\n")
    assert captured.err == ""


def test_verbose_check_shows_what_the_plugin_printed_under_its_report(capfd, noisy):
    assert main(["check", "-v", "loud"]) == 0
    lines = capfd.readouterr().out.splitlines()
    assert lines[:2] == ["ok   loud (noisy-rewards 1.0): sample, sync class; 1/1 example passed",
                         "     output while checking:"]
    shown = "\n".join(lines)
    for text in ("| loading weights...", "| C-level banner on fd 2", "Loading checkpoint shards",
                 "| some weights were not initialized", "UserWarning: this model is deprecated",
                 "| scoring a"):
        assert text in shown


def test_a_failing_plugin_shows_what_it_printed(capfd, noisy):
    assert main(["check", "loud_wrong"]) == 1
    lines = capfd.readouterr().out.splitlines()
    assert lines[:6] == [
        "FAIL loud_wrong (noisy-rewards 1.0): sample, sync function; 0/1 example passed",
        "     - example 1 (solution_str='a', ground_truth='a'): expected 0.5, got 1.0",
        "     output while checking:",
        "     | loading weights...",
        "     | C-level banner on fd 2",
        "     | about to be wrong"]


def test_check_of_everything_fails_a_broken_distribution_and_checks_the_rest(capsys, make_dist):
    half = make_dist("half-rewards", "0.3", {"half": "plug_half:f"})
    half.joinpath("METADATA").unlink()  # an interrupted install
    assert main(["check"]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert any(line.startswith(f"ok   exact_match ({TESTKIT} 0.3.1): ") for line in lines)
    assert (f"FAIL broken distribution {half} (declares half): no METADATA file (an interrupted "
            f"install?); reinstall it (pip install --force-reinstall) or remove that directory") in lines
    assert lines[-1].endswith("; 1 broken distribution(s)")
    assert f"1 distribution(s) are broken: {half}" in captured.err
