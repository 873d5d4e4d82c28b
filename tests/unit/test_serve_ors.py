"""serve/ors: tasks from rows, the session rules, the event stream, the token header, the
command's --tasks; the calls' fast paths against the openreward package's own models."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from verl_rewards.errors import BadRequest
from verl_rewards.results import Provenance
from verl_rewards.serve.auth import token_matches
from verl_rewards.serve.ors.sessions import CALLS_KEPT, Sessions
from verl_rewards.serve.ors.sse import event, result_events
from verl_rewards.serve.ors.tasks import (
    Task,
    TaskSet,
    environment_name,
    parse_tasks_option,
    spec_location,
    task_from_row,
)

VERL_ROW = {"data_source": "openai/gsm8k", "prompt": [{"role": "user", "content": "Q?"}],
            "reward_model": {"style": "rule", "ground_truth": "72"}, "extra_info": {"index": 3}}


def test_a_verl_row_and_a_flat_row_become_tasks():
    assert task_from_row(VERL_ROW) == Task("openai/gsm8k", [{"role": "user", "content": "Q?"}], "72", {"index": 3})
    assert task_from_row({"data_source": "d", "prompt": "Q", "ground_truth": 4}) == Task("d", "Q", 4, None)
    assert task_from_row(VERL_ROW).sample("#### 72").solution_str == "#### 72"


def test_a_groups_samples_are_the_tasks_sample_of_each_answer():
    task = task_from_row(VERL_ROW)
    assert task.samples(["#### 72", "", "x"]) == [task.sample(a) for a in ["#### 72", "", "x"]]


@pytest.mark.parametrize(("row", "message"), [
    ({"prompt": "Q", "ground_truth": 1}, "missing data_source"),
    ({"data_source": "d", "prompt": "Q"}, r"missing ground_truth \(or reward_model.ground_truth\)"),
    ({"data_source": "d", "prompt": "", "ground_truth": 1}, "the prompt is empty"),
    ({"data_source": "d", "prompt": [{"role": "tool", "content": "x"}], "ground_truth": 1}, "has role 'tool'"),
    ({"data_source": "d", "prompt": "Q", "ground_truth": 1, "extra_info": [1]}, "extra_info must be a mapping"),
])
def test_a_row_without_what_a_task_needs_says_what(row, message):
    with pytest.raises(ValueError, match=message):
        task_from_row(row)


def test_task_lookups_refuse_unknown_splits_and_out_of_range_indices():
    tasks = TaskSet({"train": [Task("d", "Q", 1)] * 3, "test": [Task("d", "Q", 1)]})
    assert tasks.task("train", 2) == Task("d", "Q", 1) and tasks.counts() == {"train": 3, "test": 1}
    for split, index, message in [("dev", 0, "unknown split 'dev'; this environment has 'train', 'test'"),
                                  ("train", 3, "task index 3 is out of range for split 'train' (3 tasks: 0 to 2)"),
                                  ("train", -1, "task index -1 is out of range")]:
        with pytest.raises(BadRequest, match=re.escape(message)) as refused:
            tasks.task(split, index)
        assert refused.value.status == 400
    with pytest.raises(BadRequest, match="task_spec must be one this environment listed"):
        spec_location({"question": "?", "index": True})


def test_tasks_option_names_a_split_or_defaults_to_train(tmp_path):
    odd = tmp_path / "a=b.jsonl"
    odd.write_text("")
    assert parse_tasks_option("data.parquet") == ("train", Path("data.parquet"))
    assert parse_tasks_option("test=t.jsonl") == ("test", Path("t.jsonl"))
    assert parse_tasks_option(str(odd)) == ("train", odd)  # a file that exists is a file
    with pytest.raises(ValueError, match="must be 1-64 letters"):
        parse_tasks_option("a b=t.jsonl")


def test_the_environment_is_named_after_the_reward():
    assert environment_name(Provenance("plugin", "gsm8k", "gsm8k (x 1)")) == "gsm8k"
    assert environment_name(Provenance("file", "compute_score", "f", path="/r/My Reward.v2.py")) == "my_reward_v2"
    assert environment_name(Provenance("composite", "composite", "c")) == "composite"


def test_sessions_are_bounded_closed_when_idle_and_keep_their_last_calls():
    now = [0.0]
    counts: list[int] = []
    sessions = Sessions(2, ttl_s=10, retry_after_s=3, on_count=counts.append, clock=lambda: now[0])
    sessions.add("a", "env-a")
    sessions.add("b", "env-b")
    with pytest.raises(BadRequest) as full:
        sessions.add("c", "env-c")
    assert (full.value.status, full.value.headers) == (429, {"Retry-After": "3"})
    with pytest.raises(BadRequest, match="already exists"):
        sessions.check_new("a")
    with pytest.raises(BadRequest, match="at most 128"):
        sessions.check_new("x" * 129)
    now[0] = 8.0
    assert sessions.get("a").env == "env-a"  # used at 8: not idle
    now[0] = 15.0
    assert sessions.close_idle() == ["b"] and len(sessions) == 1 and counts[-1] == 1
    with pytest.raises(BadRequest) as gone:
        sessions.get("b")
    assert gone.value.status == 404
    session = sessions.get("a")
    for i in range(CALLS_KEPT + 2):
        session.remember(str(i), None)  # type: ignore[arg-type]
    assert list(session.calls) == [str(i) for i in range(2, CALLS_KEPT + 2)]
    assert sessions.close("a") and not sessions.close("a") and counts[-1] == 0


def test_events_split_lines_and_chunk_long_results():
    assert event("error", "a\nb") == b"event: error\ndata: a\ndata: b\n\n"
    text = json.dumps({"x": "y" * 5000})
    chunks = result_events(text).decode().split("\n\n")[:-1]
    assert [c.split("\n")[0] for c in chunks] == ["event: chunk", "event: end"]
    assert "".join(c.split("\n", 1)[1].removeprefix("data: ") for c in chunks) == text


def test_the_token_may_come_as_an_api_key_header():
    assert token_matches("t", None, None, "t")
    assert token_matches("t", "Bearer t", None, "wrong")  # the first one given is checked
    assert not token_matches("t", None, None, "")
    assert token_matches("t", None, "t", "")


def test_serve_tasks_reads_every_split_and_names_a_bad_row(tmp_path):
    from verl_rewards.cli.cmd_serve import load_tasks
    from verl_rewards.cli.errors import InputError, UsageError

    good = tmp_path / "train.jsonl"
    good.write_text(json.dumps(VERL_ROW) + "\n" + json.dumps({"data_source": "d", "prompt": "Q", "ground_truth": 1}) + "\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(VERL_ROW) + "\n" + json.dumps({"data_source": "d", "prompt": "Q"}) + "\n")
    assert load_tasks([str(good), f"test={good}"]).counts() == {"train": 2, "test": 2}
    with pytest.raises(InputError, match=r"--tasks .*bad.jsonl: .*bad.jsonl, line 2: missing ground_truth"):
        load_tasks([str(bad)])
    with pytest.raises(UsageError, match="split 'train' is given twice"):
        load_tasks([str(good), f"train={good}"])


# -- the fast paths of the calls: each one agrees with the package's models ----------------

LIMIT = 100  # the service's JSON depth limit (intake.MAX_JSON_DEPTH)


def _text(text: object, **extra: object) -> dict:
    return {"type": "text", "text": text, **extra}


def _candidate(*messages: tuple[str, list[dict]], **extra: object) -> dict:
    return {"messages": [{"role": role, "blocks": blocks} for role, blocks in messages], **extra}


PLAIN_BODIES = [
    {"candidates": [_candidate(("assistant", [_text("#### 72")]))]},
    {"candidates": [_candidate(("system", [_text("s")]), ("user", [_text("q", detail={"k": [1]})]),
                               ("assistant", [_text("a"), _text("b")]), ("user", [_text("more")]))],
     "task_id": None},
    {"candidates": [_candidate(("user", [_text("no answer")]), metadata={"rollout": 3}),
                    _candidate(("assistant", [])), {"messages": []}]},
    {"candidates": [], "task_id": "abc"},
    {"candidates": [{"messages": [{"role": "assistant", "blocks": [_text("x")], "detail": None}],
                     "metadata": None}]},
]
OTHER_BODIES = [  # valid ones the plain walk leaves to the model, and invalid ones
    {"candidates": [_candidate(("assistant", [{"type": "reasoning", "text": "hmm"}, _text("#### 72")]))]},
    {"candidates": [_candidate(("user", [{"type": "image", "data": "AA==", "mimeType": "image/png"}]),
                               ("assistant", [_text("#### 7")]))]},
    {"candidates": [_candidate(("assistant", [{"text": "no type"}]))]},
    {"candidates": [_candidate(("assistant", [_text("x", extra=1)]))]},
    {"candidates": [_candidate(("tool", [_text("x")]))]},
    {"candidates": [_candidate(("assistant", [_text(7)]))]},
    {"candidates": [_candidate(("assistant", [_text("x", detail="d")]))]},
    {"candidates": [_candidate(("assistant", [_text("x")]), metadata=[1])]},
    {"candidates": [_candidate(("assistant", [_text("x")]), score=1)]},
    {"candidates": [{"messages": {"role": "assistant"}}]},
    {"candidates": [{"metadata": {}}]},
    {"candidates": "x"},
    {"candidates": [], "task_id": 5},
    {"candidates": [], "extra": True},
    {"task_id": "abc"},
    [],
]


def test_plain_candidates_are_read_as_the_score_group_model_reads_them():
    from pydantic import ValidationError

    from verl_rewards.serve.ors.candidates import model_request, plain_answers

    for body in PLAIN_BODIES:
        assert plain_answers(body, LIMIT) == model_request(body)
    assert [plain_answers(b, LIMIT).answers for b in PLAIN_BODIES[1:3]] == [["ab"], ["", "", ""]]
    for body in OTHER_BODIES:  # never read otherwise than the model would: left to it
        assert plain_answers(body, LIMIT) is None
        try:
            model_request(body)
        except ValidationError:
            pass
    assert model_request(OTHER_BODIES[0]).answers == ["#### 72"]  # a reasoning block is not the answer


@pytest.mark.parametrize("where", ["metadata", "message detail", "block detail"])
def test_plain_candidates_refuse_what_nests_past_the_limit_as_the_intake_would(where):
    from verl_rewards.serve.intake import deeper_than
    from verl_rewards.serve.ors.candidates import plain_answers

    for depth in range(LIMIT - 9, LIMIT + 3):
        nested: dict = {}
        for _ in range(depth - 1):
            nested = {"k": nested}
        block = _text("x", detail=nested) if where == "block detail" else _text("x")
        message = {"role": "assistant", "blocks": [block]}
        if where == "message detail":
            message["detail"] = nested
        candidate = {"messages": [message]}
        if where == "metadata":
            candidate["metadata"] = nested
        body = {"candidates": [candidate]}
        assert (plain_answers(body, LIMIT) is None) == deeper_than(body, LIMIT), depth


def _result(scores, statuses, errors, extra=None):
    from verl_rewards.results import BatchResult

    return BatchResult(scores, errors, statuses, extra or {}, Provenance("plugin", "gsm8k", "gsm8k (x 1)"))


def test_group_answers_are_what_the_package_models_write():
    from openreward.environments.types import GroupScore, ScoreGroupOutput

    from verl_rewards.serve.ors.answers import group_answer
    from verl_rewards.serve.ors.environment import group_scores

    result = _result([1.0, 0.0, -1.0, float("nan"), 0.1 + 0.2, 1e-300],
                     ["ok", "ok", "failed", "ok", "ok", "timeout"],
                     [None, None, "RuntimeError: b\u00f6se \"quotes\"\n(at f.py:1)", None, None, "took 3 s"])
    model = ScoreGroupOutput(scores=[GroupScore(**s) for s in group_scores(result)])
    assert json.loads(group_answer(result)) == json.loads(model.model_dump_json())
    assert json.loads(group_answer(result))["scores"][3]["reward"] is None  # NaN: null, as pydantic writes it


def test_tool_answers_are_what_the_package_models_write():
    from openreward.environments import TextBlock, ToolOutput
    from openreward.environments.types import RunToolError, RunToolOutput, RunToolSuccess

    from verl_rewards.serve.ors.answers import tool_answer
    from verl_rewards.serve.ors.environment import tool_output

    outputs = [tool_output(_result([1.0], ["ok"], [None], {"acc": [True], "pred": ["72"]}), "score", "train", 0),
               tool_output(_result([-1.0], ["failed"], ["E: x"]), "skip", "test", 2),
               tool_output(_result([float("inf")], ["ok"], [None], {"v": [float("nan")]}), "score", "train", 1),
               ToolOutput(blocks=[TextBlock(text="\u00e9\n\"", detail={"a": [1, None]})], metadata=None)]
    for output in outputs:
        answer = RunToolOutput(RunToolSuccess(output=output))
        assert json.loads(tool_answer(answer)) == json.loads(answer.model_dump_json())
    refused = RunToolOutput(RunToolError(error="'x' is not a valid tool", reason="not_found"))
    assert tool_answer(refused) == refused.model_dump_json()
    assert json.loads(tool_answer(RunToolOutput(RunToolSuccess(output=outputs[1]))))["output"]["reward"] is None


def test_the_submit_tool_is_inspected_once_and_called_through_the_package():
    import asyncio

    from openreward.environments import ToolOutput
    from openreward.environments.session import call_session_tool

    from verl_rewards.serve.ors.environment import RewardEnvironment, SubmitInput, environment_class

    # resolved objects, not the text `from __future__ import annotations` leaves to compile per call
    assert RewardEnvironment.submit.__annotations__ == {"params": SubmitInput, "return": ToolOutput}
    seen: list[list] = []

    async def submit_samples(samples):
        seen.append(samples)
        return _result([1.0], ["ok"], [None])

    env_cls = environment_class("gsm8k", TaskSet({"train": [Task("d", "Q", "72")]}), submit_samples, "score")
    assert env_cls.tool_names() == frozenset({"submit"})

    async def episode():
        env = env_cls(task_spec={"split": "train", "index": 0})
        return [await call_session_tool(env, None, name, tool_input)
                for name, tool_input in [("nope", {}), ("submit", {"answr": "1"}),
                                         ("submit", {"answer": "#### 72"}), ("submit", {"answer": "1"})]]

    unknown, wrong, scored, again = [o.root for o in asyncio.run(episode())]
    assert (unknown.reason, wrong.reason, again.reason) == ("not_found", "input_validation", "episode_finished")
    assert scored.output.reward == 1.0 and scored.output.finished
    assert [s.solution_str for batch in seen for s in batch] == ["#### 72"]


def test_startup_objects_are_frozen_out_of_the_collector():
    import gc

    from verl_rewards.serve.runner import freeze_startup_objects

    try:
        freeze_startup_objects()
        assert gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()
