"""RewardInfo: what a reward is, read from its signatures without building it."""

from __future__ import annotations

import pickle
from typing import Literal

import pytest

from verl_rewards import reward
from verl_rewards._inspect import RewardInfo, describe
from verl_rewards.errors import NotARewardError, VerlRewardsError


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


@pytest.mark.parametrize("target", [42, NotCallable])
def test_what_is_no_reward_is_a_typed_verdict_that_pickles(target):
    with pytest.raises(NotARewardError) as raised:
        describe("x", target)
    assert isinstance(raised.value, TypeError) and isinstance(raised.value, VerlRewardsError)
    again = pickle.loads(pickle.dumps(raised.value))
    assert (type(again), str(again)) == (NotARewardError, str(raised.value))


def test_a_record_is_frozen():
    with pytest.raises(AttributeError):
        RewardInfo("x", "sample").is_async = True  # type: ignore[misc]


LITERAL_REWARD = '''
from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Optional

if TYPE_CHECKING:
    from somewhere import Unknowable

Method = Literal["strict", "flexible"]


def compute_score(data_source, solution_str, ground_truth, extra_info=None, *, method: Method = "strict",
                  level: Optional[Literal[1, 2]] = None, hint: Unknowable = None, scale: float = 1.0,
                  tags: list[str] | None = None, untyped=None):
    return 1.0
'''


def test_literal_kwargs_give_their_values_even_through_an_alias_in_a_string_annotation(reward_file):
    from verl_rewards import RewardRef
    from verl_rewards.resolve import inspect_ref

    info = inspect_ref(RewardRef.from_file(reward_file(LITERAL_REWARD)))
    assert info.kwarg_choices == {"method": ("strict", "flexible"), "level": (1, 2, None)}
    assert info.kwarg_types == {"scale": "float"}
    assert [f"{k}: {info.kwarg_type(k)}" for k in info.accepted_kwargs] == [
        "method: 'strict' | 'flexible'", "level: 1 | 2 | None", "hint: Unknowable", "scale: float",
        "tags: list[str] | None", "untyped: any"]


def test_a_value_outside_a_literal_is_named_with_the_close_choice():
    def fn(data_source, solution_str, ground_truth, extra_info=None, mode: Literal["strict", "loose"] = "strict",
           level: Literal[1, 2] = 1):
        return 1.0

    info = describe("f", fn)
    assert info.mistyped({"mode": "loose", "level": 2}) == []
    assert info.mistyped({"mode": "lose", "level": True}) == [
        "'mode' must be one of 'strict', 'loose', not 'lose' (did you mean 'loose'?)",
        "'level' must be one of 1, 2, not True"]
    assert info.close_kwargs("mdoe") == ["mode"]
