"""trainer.tokenizer: a character tokenizer built in process, saved and reloaded."""

from __future__ import annotations

import pytest

from trainer.tokenizer import SPECIAL_TOKENS, alphabet_of, build_char_tokenizer, load_tokenizer


def test_alphabet_is_the_sorted_set_of_characters():
    assert alphabet_of(["ba:", "ab"]) == [":", "a", "b"]


def test_encoding_prepends_bos_pads_left_and_decodes_back():
    tok = build_char_tokenizer(alphabet_of(["12:3"]))
    assert tok.convert_ids_to_tokens(list(range(len(tok)))) == [*SPECIAL_TOKENS, "1", "2", "3", ":"]
    encoded = tok(["12:3", "3"], padding=True)
    assert encoded["input_ids"] == [[1, 4, 5, 7, 6], [0, 0, 0, 1, 6]]
    assert encoded["attention_mask"] == [[1, 1, 1, 1, 1], [0, 0, 0, 1, 1]]
    assert tok.batch_decode(encoded["input_ids"], skip_special_tokens=True) == ["12:3", "3"]
    assert tok.decode([4, 7, 2]) == "1:<eos>"


def test_unknown_characters_become_unk():
    tok = build_char_tokenizer("ab")
    assert tok("axb")["input_ids"] == [1, 4, tok.unk_token_id, 5]


def test_saved_tokenizer_reloads_identically(tmp_path):
    tok = build_char_tokenizer("0123456789:")
    tok.save_pretrained(tmp_path)
    again = load_tokenizer(tmp_path)
    assert again.padding_side == "left"
    assert again(["12:", "9"], padding=True)["input_ids"] == tok(["12:", "9"], padding=True)["input_ids"]


def test_multi_character_entries_are_rejected():
    with pytest.raises(ValueError, match="single characters"):
        build_char_tokenizer(["ab"])
