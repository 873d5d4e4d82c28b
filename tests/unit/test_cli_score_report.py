"""What `score` says when a run ends: here, the reward's own lines under --verbose."""

from __future__ import annotations

import linecache

from verl_rewards.cli.score_report import register_file_sources
from verl_rewards.config import load_config
from verl_rewards.spec import spec_from_config


def test_each_file_reward_of_a_composite_gives_its_lines_where_its_file_is_gone(reward_file):
    paths = [reward_file(f"def compute_score(a, b, c, d=None):\n    return {n}.0\n", f"r{n}.py") for n in (1, 2)]
    spec = spec_from_config(load_config({"rewards": {"a": {"path": str(paths[0])},
                                                     "b": {"path": str(paths[1])}}}))
    for path in paths:
        path.unlink()
        linecache.cache.pop(str(path), None)
    register_file_sources(spec)
    assert [linecache.getline(ref.path, 2).strip() for ref in spec.refs] == ["return 1.0", "return 2.0"]
