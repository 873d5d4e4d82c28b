from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from verl_rewards.results import BatchResult, Provenance
from verl_rewards.token_rewards import last_valid_positions, token_level_rewards

PROVENANCE = Provenance("file", "f", "f (file x)")


def _result(scores, extra=None, errors=None) -> BatchResult:
    n = len(scores)
    return BatchResult(list(scores), errors or [None] * n, ["ok"] * n, extra or {}, PROVENANCE)


def test_score_lands_on_the_last_valid_token_for_any_padding_side():
    mask = torch.tensor([[1, 1, 1, 0, 0], [0, 0, 1, 1, 1], [1, 0, 1, 0, 0]])
    tensor = token_level_rewards(_result([0.5, 1.0, -2.0]), mask).token_level_scores
    assert tensor.tolist() == [[0, 0, 0.5, 0, 0], [0, 0, 0, 0, 1.0], [0, 0, -2.0, 0, 0]]
    assert tensor.dtype == torch.float32


def test_all_zero_row_keeps_its_score_at_position_zero():
    assert last_valid_positions(torch.tensor([[0, 0, 0]])).tolist() == [0]


def test_extra_info_columns_become_arrays():
    result = _result([1.0, 0.0], {"acc": [1, 0], "why": ["ok", None]}, errors=[None, "E: x"])
    extra = token_level_rewards(result, torch.ones(2, 3)).reward_extra_info
    assert extra["acc"].dtype == np.float64 and extra["acc"].tolist() == [1.0, 0.0]
    assert extra["why"].dtype == object and extra["why"].tolist() == ["ok", None]
    assert extra["error"].tolist() == [None, "E: x"]


def test_mask_of_the_wrong_batch_size_is_refused():
    with pytest.raises(ValueError, match=r"response_mask must be \(batch=2"):
        token_level_rewards(_result([1.0, 2.0]), torch.ones(3, 4))


def test_tensor_follows_the_mask_device():
    mask = torch.ones(2, 3, device="meta")
    assert token_level_rewards(_result([1.0, 2.0]), mask).token_level_scores.device.type == "meta"


@settings(max_examples=200, deadline=None, database=None)  # no example database
@given(st.data())
def test_token_tensor_row_sums_equal_the_scores(data):
    batch = data.draw(st.integers(1, 8))
    length = data.draw(st.integers(1, 12))
    rows = [data.draw(st.lists(st.booleans(), min_size=length, max_size=length)) for _ in range(batch)]
    scores = data.draw(st.lists(st.floats(-100, 100), min_size=batch, max_size=batch))
    tensor = token_level_rewards(_result(scores), torch.tensor(rows, dtype=torch.bool)).token_level_scores
    assert torch.allclose(tensor.sum(-1), torch.tensor(scores, dtype=torch.float32), atol=1e-4)
    assert int((tensor != 0).sum(-1).max()) <= 1  # one non-zero entry per row at most


def _word_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "the", "answer", "is", "41", "42"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece()  # joins words with spaces
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]")


def test_decode_responses_keeps_only_valid_tokens_and_matches_decode():
    from verl_rewards.token_rewards import decode_responses

    tokenizer = _word_tokenizer()
    responses = torch.tensor([[2, 3, 4, 6, 0], [2, 3, 4, 5, 3]])
    mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]])
    texts = decode_responses(tokenizer, responses, mask)
    assert texts == ["the answer is 42", "the answer is"]
    assert texts[0] == tokenizer.decode([2, 3, 4, 6])


def test_score_responses_goes_from_token_ids_to_the_token_level_tensor(reward_file):
    from verl_rewards import Scorer
    from verl_rewards.token_rewards import score_responses

    path = reward_file("def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
                       "    return float(solution_str.split()[-1] == ground_truth)\n")
    responses = torch.tensor([[2, 3, 4, 6, 0, 0], [2, 3, 4, 5, 0, 0]])
    mask = responses.ne(0).long()
    with Scorer.from_config({"path": str(path), "executor": "local"}) as scorer:
        result, rewards = score_responses(scorer, _word_tokenizer(), responses, mask, ["d", "d"], ["42", "42"])
    assert result.scores == [1.0, 0.0]
    assert rewards.token_level_scores.tolist() == [[0, 0, 0, 1.0, 0, 0], [0] * 6]
