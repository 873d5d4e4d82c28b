"""argparse ``type=`` converters the subcommands share."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An integer of 1 or more, else argparse's usage error naming the text given."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value
