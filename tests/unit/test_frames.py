"""A failed sample's error names the innermost frame of the reward's own code."""

from __future__ import annotations

import re
import textwrap

import pytest

from verl_rewards import RewardRef
from verl_rewards.frames import format_frames, reward_frames
from verl_rewards.resolve import resolve
from verl_rewards.samples import Sample
from verl_rewards.scoring import score_samples

REWARD = """
import json

import yaml


def _parse(text):
    return json.loads(text)


def _deep(text):
    return _parse(text)


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "key":
        return {"a": 1}["missing"]
    if solution_str == "helper":
        return _deep("not json")
    if solution_str == "yaml":
        return yaml.safe_load("[unclosed")
    return 1.0
"""


def _line(text: str) -> int:
    lines = textwrap.dedent(REWARD).splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def _error(reward_file, solution: str, delete: bool = False) -> tuple[str, str]:
    path = reward_file(REWARD)
    ref = RewardRef.from_file(path)
    if delete:
        path.unlink()  # as on a worker that never saw the file
    [outcome] = score_samples(resolve(ref), [Sample("d", solution, "g")])
    assert outcome.status == "failed" and outcome.error is not None
    return outcome.error, str(path)


def test_a_raise_in_the_reward_names_its_file_line_and_function(reward_file):
    error, path = _error(reward_file, "key")
    assert error == f"KeyError: 'missing' (at {path}:{_line('missing')} in compute_score)"


def test_the_innermost_frame_of_the_reward_wins_over_the_stdlib_it_called(reward_file):
    error, path = _error(reward_file, "helper")
    assert error.startswith("JSONDecodeError: Expecting value: line 1 column 1")
    assert error.endswith(f" (at {path}:{_line('json.loads')} in _parse)")


def test_another_installed_package_is_not_the_rewards_code(reward_file):
    error, path = _error(reward_file, "yaml")
    assert error.startswith("ParserError: ")
    assert error.endswith(f" (at {path}:{_line('yaml.safe_load')} in compute_score)")


def test_a_file_reward_deleted_before_loading_still_shows_its_source_lines(reward_file):
    path = reward_file(REWARD)
    ref = RewardRef.from_file(path)
    path.unlink()
    with pytest.raises(ValueError) as raised:  # called from here, through the framework
        resolve(ref).sample_fn("d", "helper", "g")
    frames = reward_frames(raised.value)
    assert [f.function for f in frames] == ["compute_score", "_deep", "_parse"]
    assert format_frames(frames[-1:]) == [
        f'  File "{path}", line {_line("json.loads")}, in _parse',
        "    return json.loads(text)",
    ]


def test_an_error_raised_by_the_framework_itself_has_no_location(reward_file):
    path = reward_file("def compute_score(data_source, solution_str, ground_truth):\n"
                       "    return 'not a number'\n")
    [outcome] = score_samples(resolve(RewardRef.from_file(path)), [Sample("d", "s", "g")])
    assert outcome.error is not None and " (at " not in outcome.error
    assert outcome.error.startswith("RewardValueError: ")


def test_a_long_message_is_cut_but_keeps_its_location(reward_file):
    path = reward_file("def compute_score(data_source, solution_str, ground_truth):\n"
                       "    raise ValueError('x' * 2000)\n")
    [outcome] = score_samples(resolve(RewardRef.from_file(path)), [Sample("d", "s", "g")])
    assert outcome.error is not None and len(outcome.error) <= 500
    assert outcome.error.endswith(f"... (at {path}:2 in compute_score)")


def test_a_long_message_is_cut_after_a_word_never_inside_one(reward_file):
    path = reward_file("def compute_score(data_source, solution_str, ground_truth):\n"
                       "    raise ValueError('knows: ' + ', '.join(f'source_{i:03d}' for i in range(100)))\n")
    [outcome] = score_samples(resolve(RewardRef.from_file(path)), [Sample("d", "s", "g")])
    assert outcome.error is not None and len(outcome.error) <= 500
    listed, _, rest = outcome.error.removeprefix("ValueError: knows: ").partition(" ...")
    assert listed.endswith(",") and rest == f" (at {path}:2 in compute_score)"
    assert all(re.fullmatch(r"source_\d{3}", name) for name in listed.rstrip(",").split(", "))


def test_a_location_is_read_back_from_an_error_text():
    from verl_rewards.frames import Frame, parse_location

    text = "reward x failed on sample 3: KeyError: 'a' (at /p/r.py:12 in score) (in.jsonl, line 4)"
    assert parse_location(text) == Frame("/p/r.py", 12, "score")
    assert parse_location("KeyError: 'a'") is None
