"""The prompt reaches a reward only when its signature names ``prompt`` / ``prompts``."""

from __future__ import annotations

import pytest

from verl_rewards import RewardRef
from verl_rewards.errors import PluginShapeError
from verl_rewards.resolve import resolve
from verl_rewards.samples import Sample
from verl_rewards.scoring import Limits, score_samples

REWARDS = '''
import asyncio

def verl_style(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    return {"score": 1.0, "saw_prompt": "prompt" in kwargs}

def wants_prompt(data_source, solution_str, ground_truth, extra_info=None, prompt=None):
    return {"score": 1.0, "prompt": prompt}

def keyword_only_prompt(solution_str, ground_truth, data_source, *, prompt, scale=1.0):
    return {"score": scale * len(prompt)}

def positional_prompt(ds, sol, gt, prompt=None):
    return {"score": 0.0, "prompt": prompt}

def batch_prompts(data_sources, solution_strs, ground_truths, extra_infos, prompts):
    return [{"score": 1.0, "prompt": p} for p in prompts]

async def async_prompt(data_source, solution_str, ground_truth, extra_info=None, prompt=None):
    await asyncio.sleep(0)
    return {"score": 1.0, "prompt": prompt}

class Judge:
    def __init__(self, scale=1.0):
        self.scale = scale
    def __call__(self, data_source, solution_str, ground_truth, extra_info=None, prompt=None):
        return {"score": self.scale, "prompt": prompt}
'''

SAMPLES = [Sample("d", "a", "a", None, "first?"), Sample("d", "b", "b", None, [{"role": "user", "content": "2nd"}])]


@pytest.fixture
def load(reward_file):
    path = reward_file(REWARDS, "prompted.py")
    return lambda name, **kw: resolve(RewardRef.from_file(path, name, kw))


def _extras(loaded, key: str) -> list[object]:
    outcomes = score_samples(loaded, SAMPLES, Limits(timeout_s=5))
    assert [o.status for o in outcomes] == ["ok", "ok"], outcomes
    return [o.extra[key] for o in outcomes]


def test_a_verl_style_reward_never_receives_the_prompt_even_with_var_kwargs(load) -> None:
    loaded = load("verl_style")
    assert loaded.prompt_param is None
    assert _extras(loaded, "saw_prompt") == [False, False]


@pytest.mark.parametrize("name", ["wants_prompt", "async_prompt", "positional_prompt", "Judge"])
def test_a_reward_naming_prompt_receives_each_samples_prompt(load, name: str) -> None:
    loaded = load(name)
    assert loaded.prompt_param == "prompt"
    assert _extras(loaded, "prompt") == ["first?", [{"role": "user", "content": "2nd"}]]


def test_a_keyword_only_prompt_is_passed_by_keyword_with_kwargs(load) -> None:
    outcomes = score_samples(load("keyword_only_prompt", scale=2.0), SAMPLES[:1], Limits(timeout_s=5))
    assert outcomes[0].score == 2.0 * len("first?")


def test_a_batch_reward_naming_prompts_receives_the_prompt_column(load) -> None:
    loaded = load("batch_prompts")
    assert (loaded.shape, loaded.prompt_param) == ("batch", "prompts")
    assert _extras(loaded, "prompt") == ["first?", [{"role": "user", "content": "2nd"}]]


def test_a_sample_without_prompt_passes_none(load) -> None:
    outcome = score_samples(load("wants_prompt"), [Sample("d", "a", "a")], Limits(timeout_s=5))[0]
    assert outcome.extra == {"prompt": None}


def test_the_verl_signature_adapter_forwards_a_prompt_keyword(load) -> None:
    fn = load("wants_prompt").sample_fn
    assert fn("d", "a", "a", None, prompt="why?") == {"score": 1.0, "prompt": "why?"}
    assert fn("d", "a", "a") == {"score": 1.0, "prompt": None}


def test_the_invoke_closure_still_takes_the_four_verl_fields(load) -> None:
    # Callers that predate the prompt (four positional fields) keep working.
    assert load("verl_style").invoke("d", "a", "a", None) == {"score": 1.0, "saw_prompt": False}
    assert load("wants_prompt").invoke("d", "a", "a", None) == {"score": 1.0, "prompt": None}


def test_reward_kwargs_that_set_prompt_are_a_shape_error(load) -> None:
    with pytest.raises(PluginShapeError, match="prompted.py"):
        load("wants_prompt", prompt="fixed")
