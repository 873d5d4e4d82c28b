"""positive_int: the --batch-size / --max-* converter `score` and `serve` share."""

from __future__ import annotations

import argparse

import pytest

from verl_rewards.cli.argtypes import positive_int


def test_a_positive_integer_is_taken():
    assert positive_int("1") == 1
    assert positive_int("4096") == 4096


@pytest.mark.parametrize("text", ["0", "-3", "1.5", "many", ""])
def test_anything_else_is_a_usage_error_naming_the_text(text):
    with pytest.raises(argparse.ArgumentTypeError) as e:
        positive_int(text)
    assert str(e.value) == f"expected a positive integer, got {text!r}"


def test_serve_refuses_a_zero_queue_as_a_usage_error(capsys):
    from verl_rewards.cli.main import main

    assert main(["serve", "--max-queue", "0", "reward.plugin=exact_match"]) == 2
    assert "expected a positive integer, got '0'" in capsys.readouterr().err
