"""RewardInfo: what a reward is, read from its signatures without building it."""

from __future__ import annotations

import pytest

from verl_rewards import reward
from verl_rewards._inspect import RewardInfo, describe


def sample_fn(data_source, solution_str, ground_truth, extra_info=None, prompt=None, *,
              strict: bool = False, **options):
    return 1.0


async def batch_fn(data_sources, solution_strs, ground_truths, extra_infos, scale=1.0):
    return [1.0]


@reward(timeout_s=5, num_gpus=0.5, max_batch_size=8)
class Judge:
    built = 0

    def __init__(self, url: str, retries: int = 2):
        Judge.built += 1

    async def __call__(self, data_sources, solution_strs, ground_truths, extra_infos=None, prompts=None):
        return [1.0]


class NotCallable:
    def __init__(self):
        pass


def test_a_function_is_described_from_its_signature():
    info = describe("f", sample_fn)
    assert (info.shape, info.is_async, info.is_class, info.takes_prompt) == ("sample", False, False, True)
    assert info.accepted_kwargs == ("strict",) and info.accepts_var_kwargs
    assert info.kwarg_types == {"strict": "bool"} and info.accepts("anything")


def test_an_async_batch_function_and_its_kwarg_default_types():
    info = describe("b", batch_fn)
    assert (info.shape, info.is_async, info.takes_prompt) == ("batch", True, False)
    assert info.unaccepted({"scale": 2, "nope": 1}) == ["nope"]
    assert info.mistyped({"scale": "big"}) == ["'scale' must be float, not 'big' (str)"]


def test_a_class_is_read_through_its_constructor_and_unbound_call_without_building_it():
    info = describe("j", Judge)
    assert Judge.built == 0
    assert (info.shape, info.is_async, info.is_class, info.takes_prompt) == ("batch", True, True, True)
    assert info.accepted_kwargs == ("url", "retries") and not info.accepts_var_kwargs
    assert info.kwarg_types == {"url": "str", "retries": "int"}
    assert (info.timeout_s, info.num_gpus, info.max_batch_size, info.kind) == (5, 0.5, 8, None)


@pytest.mark.parametrize(("target", "message"), [
    (42, "target is a int, not a function or class"),
    (NotCallable, "instances of the class are not callable"),
])
def test_what_is_no_reward_is_refused(target, message):
    with pytest.raises(TypeError, match=message):
        describe("x", target)


def test_a_record_is_frozen():
    with pytest.raises(AttributeError):
        RewardInfo("x", "sample").is_async = True  # type: ignore[misc]
