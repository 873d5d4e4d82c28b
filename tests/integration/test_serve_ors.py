"""`verl-rewards serve --tasks`: the reward as an Open Reward Standard environment, driven by
the real clients (the openreward SDK, TRL 1.16's OpenRewardSpec and GRPOTrainer) against
the console-script server in a subprocess; hostile requests on its routes; the skip
policy, the queue and the drain."""

from __future__ import annotations

import json
import os
import signal
import string
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from verl_rewards import Scorer

TOKEN = "ors-s3cret"
TASKS = [  # verl's layout (reward_model.ground_truth, chat prompt, extra_info) and the flat one
    {"data_source": "openai/gsm8k", "prompt": [{"role": "user", "content": "What is 6*12?"}],
     "reward_model": {"style": "rule", "ground_truth": "72"}, "extra_info": {"index": 0, "answer": "6*12=72"}},
    {"data_source": "openai/gsm8k", "prompt": "What is 2+2?", "ground_truth": "4"},
    {"data_source": "openai/gsm8k", "prompt": [{"role": "system", "content": "Be brief."},
                                                {"role": "user", "content": "What is 9-2?"}],
     "ground_truth": "7"},
]
TRUTHS = ["72", "4", "7"]
Server = Any  # conftest's ServeProcess(proc, url, lines)


@pytest.fixture(autouse=True)
def _openreward_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENREWARD_DISABLE_UPDATE_CHECK", "1")  # the SDK's PyPI check


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ors") / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in TASKS))
    return path


@pytest.fixture(scope="module")
def start(launch_serve: Callable[..., Server], tasks_file: Path) -> Callable[..., Server]:
    def start(*args: str, token: str | None = None, timeout_s: float = 180.0) -> Server:
        env = {k: v for k, v in os.environ.items() if k != "VERL_REWARDS_TOKEN"}
        env["OPENREWARD_DISABLE_UPDATE_CHECK"] = "1"
        if token is not None:
            env["VERL_REWARDS_TOKEN"] = token
        return launch_serve(["--tasks", str(tasks_file), "--tasks", f"test={tasks_file}", *args], env,
                            timeout_s, lambda s: call(s, "GET", "/readyz", token=token)[0] == 200)

    return start


@pytest.fixture(scope="module")
def server(start: Callable[..., Server], stop_serve: Callable[..., int]) -> Iterator[Server]:
    """gsm8k on the local executor with a token, small limits; its log never shows a traceback."""
    running = start("reward.plugin=gsm8k", "reward.executor=local", "--dev", "--max-body-mb", "0.01",
                    "--max-queue-mb", "1", "--max-samples", "8", "--max-sessions", "6", token=TOKEN)
    try:
        yield running
    finally:
        assert stop_serve(running) == 0
        assert "Traceback" not in "".join(running.lines)


def call(server: Server, method: str, path: str, body: Any = None, token: str | None = TOKEN,
         raw: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
    """One request; (status, headers, JSON body or text)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if token is not None:
        all_headers["X-API-Key"] = token
    request = urllib.request.Request(server.url + path, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            status, got, text = response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as e:
        status, got, text = e.code, dict(e.headers), e.read().decode()
    try:
        return status, got, json.loads(text)
    except ValueError:
        return status, got, text


def events(text: str) -> list[tuple[str, str]]:
    """An event stream's (event, data) pairs."""
    found = []
    for block in text.split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith(":")]
        if lines:
            name = lines[0].removeprefix("event: ")
            found.append((name, "\n".join(line.removeprefix("data: ") for line in lines[1:])))
    return found


def open_session(server: Server, split: str = "train", index: int = 0) -> str:
    status, _, text = call(server, "POST", "/create_session", {})
    assert status == 200
    (_, sid), _ = events(text)
    assert call(server, "POST", "/create", {"split": split, "index": index},
                headers={"X-Session-ID": sid})[0] == 200
    return sid


def submit(server: Server, sid: str, tool_input: Any) -> tuple[int, Any]:
    status, _, text = call(server, "POST", "/call", {"name": "submit", "input": tool_input},
                           headers={"X-Session-ID": sid})
    return status, events(text) if status == 200 else text


def plugin_scores(answers: list[str], truths: list[str]) -> list[float]:
    """The plugin's own scores, in process."""
    with Scorer.from_config({"plugin": "gsm8k", "executor": "local"}) as scorer:
        return scorer.score([{"data_source": "openai/gsm8k", "solution_str": a, "ground_truth": t}
                             for a, t in zip(answers, truths)]).scores


def _openreward_client(server: Server, token: str | None, monkeypatch: pytest.MonkeyPatch) -> Any:
    from openreward import OpenReward

    # The SDK puts sessions at sessions.<host> unless told where a self-hosted server is.
    monkeypatch.setenv("OPENREWARD_SESSION_URL", server.url)
    monkeypatch.setenv("OPENREWARD_API_URL", server.url)
    return OpenReward(api_key=token, base_url=server.url)


# -- the openreward SDK's own client ------------------------------------------------------


def test_the_openreward_client_lists_splits_and_tasks_and_scores_like_the_plugin(server, monkeypatch):
    from openreward.api.errors import ToolCallError

    assert call(server, "GET", "/list_environments")[2] == ["gsm8k"]
    client = _openreward_client(server, TOKEN, monkeypatch)
    try:
        env = client.environments.get("gsm8k")
        assert env.list_splits() == ["train", "test"]
        assert env.num_tasks("train") == 3
        listed = env.list_tasks("test")
        assert [t.task_spec for t in listed] == [{"split": "test", "index": i, "data_source": "openai/gsm8k"}
                                                for i in range(3)]  # no ground truth, no extra info
        assert env.get_task("train", 2).task_spec["index"] == 2
        assert [t.name for t in env.list_tools()] == ["submit"]
        answers = ["... so #### 72", "#### 5", "#### 7"]
        rewards, metadata = [], []
        for index, answer in enumerate(answers):
            with env.session(split="train", index=index) as session:
                prompt = session.get_prompt()
                output = session.call_tool("submit", {"answer": answer})
                assert output.finished is True
                rewards.append(output.reward)
                metadata.append(output.metadata)
                with pytest.raises(ToolCallError, match="episode has finished"):
                    session.call_tool("submit", {"answer": answer})
            if index == 2:  # a chat prompt with a system message, flattened as the SDK does
                assert [b.text for b in prompt] == ["[system]", "Be brief.", "[user]", "What is 9-2?"]
        assert rewards == plugin_scores(answers, TRUTHS) == [1.0, 0.0, 1.0]
        assert metadata[0] == {"status": "ok", "error": None, "split": "train", "index": 0,
                               "extra_info": {"acc": True, "pred": "72"}}
        with env.session(task=listed[1]) as session:  # a Task the server listed
            assert [b.text for b in session.get_prompt()] == ["What is 2+2?"]
            with pytest.raises(ToolCallError) as wrong:
                session.call_tool("submit", {"answr": "4"})  # the protocol's in-band error
            assert wrong.value.reason == "input_validation"
            assert session.call_tool("submit", {"answer": "#### 4"}).reward == 1.0  # still open
    finally:
        client.close()


def test_a_client_without_the_token_is_refused_and_health_is_open(server, monkeypatch):
    from openreward.api._session.http import AuthenticationError

    client = _openreward_client(server, "wrong", monkeypatch)
    try:
        with pytest.raises(AuthenticationError):
            client.environments.get("gsm8k").list_splits()
    finally:
        client.close()
    assert call(server, "GET", "/health", token=None)[:1] == (200,)
    status, _headers, body = call(server, "GET", "/gsm8k/tools", token=None)
    assert status == 401 and "X-API-Key" in body["detail"] and body["error"] == body["detail"]
    assert call(server, "GET", "/gsm8k/tools", token=None, headers={"Authorization": f"Bearer {TOKEN}"})[0] == 200


def test_v1_info_and_the_startup_line_give_the_environment_url(server):
    info = call(server, "GET", "/v1/info")[2]
    assert info["ors_url"] == server.url.replace("127.0.0.1", "127.0.0.1")
    assert info["ors"]["environment"] == "gsm8k" and info["ors"]["splits"] == {"train": 3, "test": 3}
    line, = [ln for ln in server.lines if "Open Reward Standard environment" in ln]
    assert line.rstrip().endswith(f"at ors_url {server.url}")


# -- hostile requests and limits on the new routes ------------------------------------------


def test_hostile_requests_on_the_ors_routes_get_a_4xx_naming_the_problem(server):
    sid = open_session(server)
    before = _metric(server, 'verl_rewards_samples_total{status="ok"}')
    h = {"X-Session-ID": sid}
    seen = {
        "invalid JSON": call(server, "POST", "/gsm8k/call", raw=b"{nope", headers=h),
        "JSON nested 5000 deep": call(server, "POST", "/gsm8k/call", raw=b"[" * 5000 + b"]" * 5000, headers=h),
        "no session header": call(server, "POST", "/gsm8k/call", {"name": "submit", "input": {"answer": "1"}}),
        "an unknown session": call(server, "POST", "/gsm8k/call", {"name": "submit", "input": {"answer": "1"}},
                                   headers={"X-Session-ID": "nope"}),
        "an unknown environment": call(server, "GET", "/math/tools"),
        "an unknown split": call(server, "POST", "/tasks", {"split": "dev"}),
        "a task index past the end": call(server, "POST", "/gsm8k/task", {"split": "train", "index": 3}),
        "a negative task index": call(server, "POST", "/gsm8k/task", {"split": "train", "index": -1}),
        "a task_spec it did not list": call(server, "POST", "/create", {"task_spec": {"question": "?"}},
                                            headers={"X-Session-ID": "spec"}),
        "a tool call without input": call(server, "POST", "/gsm8k/call", {"name": "submit"}, headers=h),
        "an answer over the body limit": call(server, "POST", "/gsm8k/call",
                                              {"name": "submit", "input": {"answer": "9" * 20000}}, headers=h),
        "an unknown task_id": call(server, "POST", "/gsm8k/call",
                                   {"name": "submit", "input": {"answer": "1"}, "task_id": "x"}, headers=h),
        "a non-UTF-8 API key": call(server, "GET", "/gsm8k/tools", token=None,
                                    headers={"X-API-Key": "t\xf6\xff"}),
        "too many candidates": call(server, "POST", "/gsm8k/score_group", {"candidates": [
            {"messages": [{"role": "assistant", "blocks": [{"type": "text", "text": "#### 72"}]}]}] * 9},
            headers=h),
    }
    statuses = {what: status for what, (status, _, _) in seen.items()}
    assert statuses == {
        "invalid JSON": 400, "JSON nested 5000 deep": 400, "no session header": 400,
        "an unknown session": 404, "an unknown environment": 404, "an unknown split": 400,
        "a task index past the end": 400, "a negative task index": 400, "a task_spec it did not list": 400,
        "a tool call without input": 422, "an answer over the body limit": 413, "an unknown task_id": 404,
        "a non-UTF-8 API key": 401, "too many candidates": 413,
    }
    details = {what: body["detail"] for what, (_, _, body) in seen.items()}
    assert details["a task index past the end"] == "task index 3 is out of range for split 'train' (3 tasks: 0 to 2)"
    assert details["an unknown split"] == "unknown split 'dev'; this environment has 'train', 'test'"
    assert details["a tool call without input"] == "the call request: input: Field required"
    assert details["too many candidates"].startswith("9 samples in one request; the limit is 8")
    assert _metric(server, 'verl_rewards_samples_total{status="ok"}') == before  # nothing scored
    assert submit(server, sid, {"answer": "#### 72"})[1][-1][0] == "end"  # the session still works


def test_sessions_past_the_limit_get_429_and_closed_ones_free_their_place(server):
    sids, already = [], _metric(server, "verl_rewards_ors_sessions")  # other tests' open ones
    try:
        while True:
            status, _, text = call(server, "POST", "/create_session", {})
            (_, sid), _ = events(text)
            status, headers, body = call(server, "POST", "/create", {"split": "test", "index": 0},
                                         headers={"X-Session-ID": sid})
            if status != 200:
                break
            sids.append(sid)
        assert status == 429 and headers["Retry-After"] == "1" and "--max-sessions" in body["detail"]
        assert len(sids) == 6 - already and _metric(server, "verl_rewards_ors_sessions") == 6
    finally:
        for sid in sids:
            assert call(server, "POST", "/delete", headers={"X-Session-ID": sid})[0] == 200
    assert _metric(server, "verl_rewards_ors_sessions") == already


def test_score_group_scores_candidates_as_one_batch(server):
    sid = open_session(server, "train", 0)
    texts = ["#### 72", "#### 71", "#### 72"]
    status, _, text = call(server, "POST", "/gsm8k/score_group", {"candidates": [
        {"messages": [{"role": "user", "blocks": [{"type": "text", "text": "q"}]},
                      {"role": "assistant", "blocks": [{"type": "text", "text": t}]}]} for t in texts]},
        headers={"X-Session-ID": sid})
    assert status == 200
    (name, data), = [e for e in events(text) if e[0] != "task_id"]
    assert name == "end"
    assert [s["reward"] for s in json.loads(data)["scores"]] == plugin_scores(texts, ["72"] * 3)


def test_score_group_reads_rich_candidates_with_the_package_model_and_refuses_deep_or_bad_ones(server):
    sid = open_session(server, "train", 0)
    h = {"X-Session-ID": sid}
    rich = [{"messages": [{"role": "user", "blocks": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]},
                          {"role": "assistant", "blocks": [{"type": "reasoning", "text": "6*12"},
                                                           {"type": "text", "text": t}]}],
             "metadata": {"rollout": i}} for i, t in enumerate(["#### 72", "#### 70"])]
    status, _, text = call(server, "POST", "/gsm8k/score_group", {"candidates": rich}, headers=h)
    assert status == 200
    (name, data), = [e for e in events(text) if e[0] != "task_id"]
    assert name == "end" and [s["reward"] for s in json.loads(data)["scores"]] == [1.0, 0.0]
    deep: dict[str, Any] = {}
    for _ in range(120):
        deep = {"k": deep}
    plain = {"messages": [{"role": "assistant", "blocks": [{"type": "text", "text": "#### 72"}]}]}
    status, _, body = call(server, "POST", "/gsm8k/score_group", {"candidates": [{**plain, "metadata": deep}]},
                           headers=h)
    assert (status, body["detail"]) == (400, "the body nests deeper than 100 levels")
    bad = {"messages": [{"role": "assistant", "blocks": [{"type": "text", "text": 7}]}]}
    status, _, body = call(server, "POST", "/gsm8k/score_group", {"candidates": [plain, bad]}, headers=h)
    assert status == 422 and body["detail"].startswith("the score_group request: candidates.1.messages.0.blocks")
    assert call(server, "POST", "/delete", headers=h)[0] == 200  # its place, for the tests after (--max-sessions 6)


def _metric(server: Server, name: str) -> float:
    text = call(server, "GET", "/metrics")[2]
    found = [line for line in text.splitlines() if line.startswith(name + " ")]
    return float(found[0].split()[-1]) if found else 0.0


# -- the skip policy, the queue, the drain -------------------------------------------------


@pytest.mark.parametrize("on_error", ["skip", "score"])
def test_a_failed_sample_has_no_reward_under_skip_and_error_score_under_score(start, stop_serve, on_error):
    running = start("reward.plugin=faulty", "reward.executor=local", "--dev", f"reward.on_error={on_error}",
                    "reward.error_score=-1")
    try:
        sid = open_session(running, "train", 0)
        status, got = submit(running, sid, {"answer": "raise"})
        assert status == 200
        output = json.loads(got[-1][1])["output"]
        assert output["finished"] is True and output["metadata"]["status"] == "failed"
        assert output["metadata"]["error"].startswith("RuntimeError: the reward raised on purpose")
        assert output["reward"] == (None if on_error == "skip" else -1.0)
    finally:
        assert stop_serve(running) == 0


def test_a_full_queue_is_429_before_the_stream_and_sigterm_finishes_the_call_in_flight(start, stop_serve):
    running = start("reward.plugin=sleepy", "reward.kwargs.ms=3000", "reward.executor=local", "--dev",
                    "--max-queue", "1")
    sids = [open_session(running, "train", i) for i in range(2)]
    first: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: first.update(got=submit(running, sids[0], {"answer": "72"})))
    thread.start()
    deadline = time.monotonic() + 30
    while _metric(running, "verl_rewards_queue_depth") < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    status, body = submit(running, sids[1], {"answer": "72"})
    assert status == 429 and "--max-queue" in body["detail"]
    running.proc.send_signal(signal.SIGTERM)  # while the first call is scoring
    thread.join(60)
    status, got = first["got"]
    assert status == 200 and json.loads(got[-1][1])["output"]["reward"] == 1.0
    assert stop_serve(running) == 0


# -- TRL 1.16: OpenRewardSpec + GRPOTrainer with tool calling --------------------------------


def _tool_calling_model(answers: list[str]) -> tuple[Any, Any]:
    """A tokenizer with TRL's own Qwen3 chat template (tool calling), and a one-layer Llama
    built in code whose next token depends only on the last one: after the assistant
    header it writes a ``submit`` call whose answer is one of ``answers`` (equally likely),
    then ends its turn. Nothing downloaded."""
    import torch
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen3_chat_template

    calls = [f'\n{{"name": "submit", "arguments": {{"answer": "{a}"}}}}\n' for a in answers]
    chars = sorted(set(string.printable) - set("\x0b\x0c"))
    core = Tokenizer(models.WordLevel(vocab={t: i for i, t in enumerate(["<pad>", "<unk>", *chars])},
                                      unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    core.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", unk_token="<unk>",
                                        padding_side="left")
    tokenizer.add_tokens(["<|im_start|>", "<tool_call>", "</tool_call>", "<think>", "</think>", *calls])
    tokenizer.add_special_tokens({"eos_token": "<|im_end|>"})
    tokenizer.chat_template = qwen3_chat_template
    hidden, ids = 128, tokenizer.convert_tokens_to_ids
    assert len(tokenizer) <= hidden
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1024,
        pad_token_id=ids("<pad>"), eos_token_id=ids("<|im_end|>"), tie_word_embeddings=False))
    with torch.no_grad():
        for p in model.parameters():  # attention and MLP add nothing: the residual is the token
            p.zero_()
        for norm in [model.model.norm, *(n for layer in model.model.layers
                                         for n in (layer.input_layernorm, layer.post_attention_layernorm))]:
            norm.weight.fill_(1.0)
        model.model.embed_tokens.weight.copy_(torch.eye(len(tokenizer), hidden))
        chain = {"\n": ["<tool_call>"], "<tool_call>": calls, "</tool_call>": ["<|im_end|>"],
                 **{c: ["</tool_call>"] for c in calls}}
        for last, nexts in chain.items():
            for token in nexts:
                model.lm_head.weight[ids(token), ids(last)] = 30.0 / hidden ** 0.5
    return model, tokenizer


def test_trl_openreward_spec_trains_grpo_two_steps_with_the_plugins_rewards(server, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENREWARD_SESSION_URL", server.url)
    monkeypatch.setenv("OPENREWARD_API_URL", server.url)
    monkeypatch.setenv("OPENREWARD_API_KEY", TOKEN)
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer
    from trl.experimental.openreward import OpenRewardSpec

    spec = OpenRewardSpec(server.url, num_tasks=2)
    assert spec.train_dataset["task_index"] == [0, 1]
    seen: list[tuple[list[Any], list[Any], list[int]]] = []

    def ors_submit(environments: list[Any], completions: list[Any], task_index: list[int],
                   **_: Any) -> list[float | None]:
        rewards = spec.reward_funcs(environments=environments)
        seen.append((rewards, completions, task_index))
        return rewards

    model, tokenizer = _tool_calling_model(["#### 72", "#### 4"])
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=2,
                      max_completion_length=256, max_steps=2, logging_steps=1, report_to=[], use_cpu=True,
                      save_strategy="no", max_tool_calling_iterations=1, seed=0)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=spec.train_dataset,
                          environment_factory=spec.environment_factory, reward_funcs=[ors_submit])
    trainer.train()
    steps = [log for log in trainer.state.log_history if "rewards/ors_submit/mean" in log]
    assert len(steps) == 2 and len(seen) == 2
    for log, (rewards, completions, task_index) in zip(steps, seen):
        answers = [c[0]["tool_calls"][0]["function"]["arguments"]["answer"] for c in completions]
        expected = plugin_scores(answers, [TRUTHS[i] for i in task_index])
        assert rewards == expected  # what each submit returned is the plugin's score
        assert log["rewards/ors_submit/mean"] == pytest.approx(sum(expected) / len(expected))
        assert log["tools/call_frequency"] > 0
