from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import pytest

from verl_rewards import RewardRef
from verl_rewards.errors import PluginNotFoundError, RewardFileError

SIMPLE = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, bonus=0.0):
    return float(solution_str == ground_truth) + bonus
"""


def test_plugin_reference_names_the_entry_point_and_holds_no_code(make_dist):
    make_dist("acme-rewards", "1.0", "[verl_rewards]\nexact = tp_acme.scores:exact\n")
    ref = RewardRef.from_config({"plugin": "exact", "kwargs": {"bonus": 1}})
    assert ref == RewardRef(kind="plugin", name="exact", target="tp_acme.scores:exact",
                            dist="acme-rewards", version="1.0", kwargs={"bonus": 1})
    assert ref.module_name == "tp_acme.scores"
    assert ref.display_name == "exact (acme-rewards 1.0)"


def test_unknown_plugin_fails_at_config_time():
    with pytest.raises(PluginNotFoundError):
        RewardRef.from_config({"plugin": "no_such_reward_anywhere"})


def test_file_reference_carries_source_and_hash(reward_file):
    path = reward_file(SIMPLE)
    ref = RewardRef.from_config({"path": str(path)})
    assert ref.kind == "file" and ref.source == path.read_text()
    assert len(ref.source_hash or "") == 64
    assert ref.module_name == f"verl_rewards_file_{ref.source_hash[:16]}"
    assert "custom_module" not in ref.module_name


def test_reference_is_small_and_pickles_by_value(reward_file):
    ref = RewardRef.from_config({"path": str(reward_file(SIMPLE)), "kwargs": {"bonus": 0.5}})
    data = pickle.dumps(ref)
    assert len(data) < 1500
    assert pickle.loads(data) == ref


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(RewardFileError, match="reward file not found: .*nope.py"):
        RewardRef.from_config({"path": str(tmp_path / "nope.py")})


def test_file_without_the_named_function_lists_what_it_defines(reward_file):
    path = reward_file("def score(a, b, c):\n    return 1.0\nclass Judge: pass\n")
    with pytest.raises(RewardFileError) as info:
        RewardRef.from_config({"path": str(path), "name": "compute_score"})
    assert "no function or class named 'compute_score'" in str(info.value)
    assert "Judge, score" in str(info.value)


def test_file_with_syntax_error_names_the_line(reward_file):
    path = reward_file("def compute_score(:\n    pass\n")
    with pytest.raises(RewardFileError, match="syntax error at line 1"):
        RewardRef.from_config({"path": str(path)})


def test_pickled_file_reference_loads_in_a_fresh_process_after_the_file_is_gone(reward_file):
    path = reward_file(SIMPLE)
    ref = RewardRef.from_config({"path": str(path), "kwargs": {"bonus": 0.25}})
    payload = pickle.dumps(ref)
    path.unlink()
    script = textwrap.dedent("""
        import pickle, sys
        ref = pickle.loads(sys.stdin.buffer.read())
        fn = ref.load()
        print(fn("src", "42", "42"), fn("src", "41", "42"))
        assert "custom_module" not in sys.modules
        print(ref.module_name in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], input=payload, capture_output=True,
                         check=True).stdout.decode().split()
    assert out == ["1.25", "0.25", "True"]


def test_pickled_plugin_reference_loads_by_real_module_name_in_a_fresh_process(testkit):
    ref = RewardRef.from_config({"plugin": f"{testkit.name}:exact_match"})
    script = textwrap.dedent("""
        import pickle, sys
        ref = pickle.loads(sys.stdin.buffer.read())
        result = ref.load()("src", " 7 ", "7")
        print(result["score"], "verl_rewards_testkit.shapes" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], input=pickle.dumps(ref),
                         capture_output=True, check=True).stdout.decode().split()
    assert out == ["1.0", "True"]


class _PrintsAlike:
    """Every one prints the same, whatever it holds."""

    def __init__(self, value: object) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<threshold>"


def test_kwargs_that_print_alike_but_differ_get_their_own_loaded_reward(tmp_path):
    from verl_rewards.resolve import resolve

    file = tmp_path / "r.py"
    file.write_text("def compute_score(data_source, solution_str, ground_truth, extra_info=None, t=None):\n"
                    "    return float(t.value) if isinstance(t.value, int) else -1.0\n")
    low, high = (RewardRef.from_file(file, kwargs={"t": _PrintsAlike(n)}) for n in (1, 2))
    assert low.cache_key != high.cache_key
    assert resolve(low).sample_fn("d", "x", "y") == 1.0
    assert resolve(high).sample_fn("d", "x", "y") == 2.0
    same = RewardRef.from_file(file, kwargs={"t": _PrintsAlike(1)})
    assert same.cache_key == low.cache_key  # the same state: the same key (by its pickle)


def test_unpicklable_kwargs_that_print_alike_are_told_apart_by_identity(tmp_path):
    import threading

    file = tmp_path / "r.py"
    file.write_text("def compute_score(data_source, solution_str, ground_truth, extra_info=None, t=None):\n"
                    "    return 0.0\n")
    one, other = _PrintsAlike(threading.Lock()), _PrintsAlike(threading.Lock())
    first = RewardRef.from_file(file, kwargs={"t": one})
    assert first.cache_key != RewardRef.from_file(file, kwargs={"t": other}).cache_key
    assert first.cache_key == RewardRef.from_file(file, kwargs={"t": one}).cache_key
