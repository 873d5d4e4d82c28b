"""serve.protocols: each wire protocol's request -> samples and result -> answer."""

from __future__ import annotations

import pytest

from verl_rewards.errors import ConfigError
from verl_rewards.hosts import refusal
from verl_rewards.results import BatchResult, Provenance
from verl_rewards.samples import Sample
from verl_rewards.serve.protocols import (
    BadRequest,
    Parsed,
    format_native,
    format_nemo_gym,
    format_openrlhf,
    format_slime,
    output_text,
    parse_native,
    parse_nemo_gym,
    parse_openrlhf,
    parse_seed_session,
    parse_slime,
    protocols_for,
)

PROVENANCE = Provenance("plugin", "exact_match", "exact_match (kit 1.0)", "kit", "1.0")


def _result(scores, statuses=None, errors=None, extra=None) -> BatchResult:
    n = len(scores)
    return BatchResult(list(scores), errors or [None] * n, statuses or ["ok"] * n, extra or {},
                       PROVENANCE)


def _bad(parse, body) -> BadRequest:
    with pytest.raises(BadRequest) as caught:
        parse(body, None)
    return caught.value


def test_native_samples_come_back_as_sample_records():
    parsed = parse_native({"samples": [{"data_source": "d", "solution_str": "4", "ground_truth": "4",
                                        "prompt": "2+2?"}]}, None)
    assert parsed.samples == [Sample("d", "4", "4", None, "2+2?")]


def test_native_missing_samples_is_422_naming_the_field():
    error = _bad(parse_native, {"rows": []})
    assert (error.status, error.message) == (422, "the /v1/score request is missing field(s) 'samples'")


def test_native_a_sample_missing_fields_is_422_naming_its_index_and_fields():
    error = _bad(parse_native, {"samples": [{"data_source": "d", "solution_str": "x", "ground_truth": 1},
                                            {"data_source": "d"}]})
    assert error.status == 422
    assert error.message == "samples[1]: missing required field(s) solution_str, ground_truth"


def test_a_body_that_is_not_an_object_is_400():
    error = _bad(parse_native, [1, 2])
    assert (error.status, error.message) == (400, "the /v1/score body must be a JSON object, not an array")


def test_native_answer_keeps_order_errors_statuses_extra_and_provenance():
    result = _result([1.0, 0.0], ["ok", "timeout"], [None, "SampleTimeout: exceeded timeout_s=3"],
                     {"pid": [7, None]})
    assert format_native(Parsed([]), result) == {
        "scores": [1.0, 0.0], "errors": [None, "SampleTimeout: exceeded timeout_s=3"],
        "statuses": ["ok", "timeout"], "extra_info": {"pid": [7, None]},
        "provenance": {"kind": "plugin", "name": "exact_match", "display_name": "exact_match (kit 1.0)",
                       "dist": "kit", "version": "1.0", "path": None, "source_hash": None},
    }


def test_openrlhf_scores_the_response_after_the_prompt_without_end_markers():
    parsed = parse_openrlhf({"query": ["<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>"],
                             "prompts": ["<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"],
                             "labels": ["4"]}, None)
    (sample,) = parsed.samples
    assert (sample.data_source, sample.solution_str, sample.ground_truth) == ("openrlhf", "4", "4")
    assert sample.prompt == "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"


def test_openrlhf_data_source_can_be_set_by_the_service():
    parsed = parse_openrlhf({"query": ["q a"], "prompts": ["q "], "labels": ["a"]}, "openai/gsm8k")
    assert parsed.samples[0].data_source == "openai/gsm8k"


def test_openrlhf_lists_of_different_lengths_are_422():
    error = _bad(parse_openrlhf, {"query": ["a", "b"], "prompts": ["a"], "labels": ["x", "y"]})
    assert error.status == 422 and "got 2, 1 and 2" in error.message


def test_openrlhf_missing_labels_is_422_naming_it():
    assert _bad(parse_openrlhf, {"query": ["a"]}).message == (
        "the /openrlhf request is missing field(s) 'labels'")


def test_openrlhf_answer_has_rewards_scores_and_fixed_log_keys():
    answer = format_openrlhf(Parsed([]), _result([1.0, 0.0], ["ok", "failed"], [None, "E: x"]))
    assert answer == {"rewards": [1.0, 0.0], "scores": [1.0, 0.0],
                      "extra_logs": {"reward_failed": [0.0, 1.0]}}


def test_slime_payload_becomes_one_sample_and_answers_a_number():
    parsed = parse_slime({"prompt": [{"role": "user", "content": "2+2?"}], "response": "4",
                          "label": "4"}, None)
    assert parsed.samples == [Sample("slime", "4", "4", None, [{"role": "user", "content": "2+2?"}])]
    assert format_slime(parsed, _result([0.5])) == 0.5


def test_slime_response_must_be_text():
    error = _bad(parse_slime, {"prompt": "p", "response": 4, "label": "4"})
    assert (error.status, error.message) == (422, "'response' must be a string, not a number")


NEMO_REQUEST = {
    "responses_create_params": {"input": [{"role": "user", "content": "What is 2+2?"}]},
    "response": {"id": "resp_1", "output": [
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "adding"}]},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "It is "}, {"type": "output_text", "text": "4"}]},
    ]},
    "expected_answer": "4",
    "verifier_metadata": {"difficulty": 1},
}


def test_nemo_gym_verify_reads_output_text_parts_ground_truth_and_prompt():
    parsed = parse_nemo_gym(NEMO_REQUEST, None)
    assert parsed.samples == [Sample("nemo_gym", "It is 4", "4", {"difficulty": 1},
                                     [{"role": "user", "content": "What is 2+2?"}])]


def test_nemo_gym_answer_echoes_the_request_with_reward_and_a_failure_reason():
    parsed = parse_nemo_gym(NEMO_REQUEST, None)
    answer = format_nemo_gym(parsed, _result([0.0], ["failed"], ["RuntimeError: boom"]))
    assert {k: answer[k] for k in NEMO_REQUEST} == NEMO_REQUEST
    assert answer["reward"] == 0.0 and answer["failure_reason"] == "RuntimeError: boom"
    assert answer["verl_rewards"] == {"status": "failed", "error": "RuntimeError: boom", "extra_info": {}}


def test_nemo_gym_without_a_response_is_422():
    error = _bad(parse_nemo_gym, {"responses_create_params": {"input": "hi"}})
    assert error.message == "the /nemo_gym/verify request is missing field(s) 'response'"


def test_output_text_ignores_non_message_items_and_other_parts():
    assert output_text({"output": [{"type": "function_call", "arguments": "{}"},
                                   {"type": "message", "content": [{"type": "refusal", "refusal": "no"}]}]}) == ""


def test_seed_session_takes_an_object_or_nothing():
    assert parse_seed_session(None, None) == Parsed([])
    assert parse_seed_session({"anything": 1}, None) == Parsed([])
    assert _bad(parse_seed_session, "x").status == 400


def test_a_misspelt_sample_field_is_422_suggesting_the_right_name():
    error = _bad(parse_native, {"samples": [{"data_source": "d", "solution": "x", "groundtruth": "1"}]})
    assert (error.status, error.message) == (
        422, "samples[0]: missing required field(s) solution_str, ground_truth; did you mean "
             "'solution_str' (not 'solution') and 'ground_truth' (not 'groundtruth')?")


def test_a_misspelt_request_field_is_422_suggesting_the_right_name():
    error = _bad(parse_native, {"sample": []})
    assert (error.status, error.message) == (
        422, "the /v1/score request is missing field(s) 'samples'; did you mean 'samples' (not 'sample')?")
    error = _bad(parse_slime, {"response": "1", "labels": "1"})
    assert error.message == ("the /slime request is missing field(s) 'label'; did you mean "
                             "'label' (not 'labels')?")


def test_a_missing_field_with_nothing_like_it_is_named_without_a_guess():
    error = _bad(parse_native, {"samples": [{"data_source": "d", "text": "x", "ground_truth": "1"}]})
    assert error.message == "samples[0]: missing required field(s) solution_str"


def test_slime_says_a_failed_sample_in_headers_beside_the_bare_number():
    from verl_rewards.serve.protocols import PROTOCOLS

    slime = PROTOCOLS["/slime"]
    parsed = Parsed([Sample("slime", "x", "1")])
    failed = _result([-1.0], ["failed"], ["RuntimeError: bad\n  line two"])
    assert slime.format(parsed, failed) == (-1.0, {"X-Verl-Rewards-Status": "failed",
                                                   "X-Verl-Rewards-Error": "RuntimeError: bad line two"})
    assert slime.format(parsed, _result([1.0])) == (1.0, {})
    assert PROTOCOLS["/v1/score"].format(Parsed([Sample("d", "x", "1")]), _result([1.0])).headers == {}


# -- on_error: skip per endpoint (hosts.py) ---------------------------------


@pytest.mark.parametrize(("path", "body"), [
    ("/openrlhf", {"query": ["q a"], "prompts": ["q "], "labels": ["a"]}),
    ("/slime", {"prompt": "p", "response": "4", "label": "4"}),
])
def test_under_skip_an_endpoint_whose_host_cannot_drop_a_sample_answers_409_naming_why(path, body):
    protocol = protocols_for("skip", {})[path]
    with pytest.raises(BadRequest) as refused:
        protocol.parse(body, None)
    assert (refused.value.status, refused.value.message) == (409, refusal(protocol.host))
    assert protocols_for("score", {})[path].parse(body, None).samples  # served otherwise


def test_nemo_gym_under_skip_masks_a_failed_sample_with_nemo_gyms_own_flag():
    protocol = protocols_for("skip", {})["/nemo_gym/verify"]
    parsed = protocol.parse(NEMO_REQUEST, None)
    failed = protocol.format(parsed, _result([0.0], ["timeout"], ["SampleTimeout: exceeded timeout_s=3"])).body
    assert (failed["mask_sample"], failed["failure_kind"], failed["failure_reason"]) == (
        True, "verifier_error", "SampleTimeout: exceeded timeout_s=3")
    assert "mask_sample" not in protocol.format(parsed, _result([1.0])).body


def test_nemo_gym_under_score_names_the_failure_but_keeps_the_sample():
    protocol = protocols_for("score", {})["/nemo_gym/verify"]
    answer = protocol.format(protocol.parse(NEMO_REQUEST, None),
                             _result([0.0], ["failed"], ["RuntimeError: boom"])).body
    assert "mask_sample" not in answer and answer["failure_kind"] == "verifier_error"


def test_openrlhf_strips_the_end_markers_verl_rewards_strip_names_as_the_reward_file_does():
    body = {"query": ["q 7</s><pad>"], "prompts": ["q"], "labels": ["7"]}
    protocol = protocols_for("score", {"VERL_REWARDS_STRIP": '["<pad>", "</s>"]'})["/openrlhf"]
    assert protocol.parse(body, None).samples[0].solution_str == " 7"
    with pytest.raises(ConfigError, match="VERL_REWARDS_STRIP must be a JSON list of strings"):
        protocols_for("score", {"VERL_REWARDS_STRIP": '"</s>"'})
