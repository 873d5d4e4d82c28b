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


def column_map(text: str) -> dict[str, str]:
    """``solution_str=response,ground_truth=answer``: which input column holds each sample
    field, else argparse's usage error naming the fields there are."""
    from ..samples import Sample

    fields = Sample._fields
    mapping: dict[str, str] = {}
    for pair in text.split(","):
        field, equals, column = (part.strip() for part in pair.partition("="))
        if not equals or not field or not column:
            raise argparse.ArgumentTypeError(
                f"expected FIELD=COLUMN[,FIELD=COLUMN...], e.g. solution_str=response, got {text!r}")
        if field not in fields:
            raise argparse.ArgumentTypeError(f"{field!r} is not a sample field; the fields are "
                                             f"{', '.join(fields)}")
        if field in mapping:
            raise argparse.ArgumentTypeError(f"{field!r} is mapped twice in {text!r}")
        mapping[field] = column
    return mapping
