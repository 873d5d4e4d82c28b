"""What the ORS routes answer, as JSON text: what the ``openreward`` package's models
write, built straight from plain data where the shape is fixed.

Serialising those models costs more than scoring a sample: their ``Sequence`` and
``Mapping`` fields go through Python callbacks in pydantic. A tool's successful output
made of text blocks (``submit``'s, every time) is written here field by field, in the
model's field order; any other output (an error, other block types) by the model.
So is ``score_group``'s answer, one template per candidate scored ``ok``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from openreward.environments import TextBlock
from openreward.environments.types import RunToolOutput, RunToolSuccess

from ...results import BatchResult
from ...wire import json_data

COMPACT = (",", ":")  # the models' own JSON has no spaces


def json_text(value: Any) -> str:
    """``value`` as compact JSON, as the package's models write it: NaN and infinities as
    ``null``, other values made plain (:func:`verl_rewards.wire.json_data`)."""
    try:
        return json.dumps(value, separators=COMPACT, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError):
        return json.dumps(json_data(value), separators=COMPACT, ensure_ascii=False, allow_nan=False)


def tool_answer(output: RunToolOutput) -> str:
    """A tool call's answer (``RunToolOutput``) as the JSON its model writes."""
    root = output.root
    if not isinstance(root, RunToolSuccess) or not all(type(b) is TextBlock for b in root.output.blocks):
        return str(output.model_dump_json())
    out = root.output
    blocks = [{"text": b.text, "detail": b.detail, "type": b.type} for b in out.blocks]
    return json_text({"ok": True, "output": {"blocks": blocks, "metadata": out.metadata,
                                             "reward": out.reward, "finished": out.finished}})


def group_answer(result: BatchResult) -> str:
    """``score_group``'s answer (``ScoreGroupOutput``): one ``GroupScore`` per sample of
    ``result``, as :func:`json_text` writes :func:`..environment.group_scores`. A sample
    scored ``ok`` (the common case) is written from a template: ``json`` writes a finite
    float as its ``repr``, and its metadata is always the same."""
    parts = []
    for score, status, error in zip(result.scores, result.statuses, result.errors):
        if status == "ok" and error is None and math.isfinite(score):
            parts.append(f'{{"reward":{float(score)!r}{_OK_METADATA}')
        else:
            parts.append(json_text({"reward": float(score), "metadata": {"status": status, "error": error}}))
    return f'{{"scores":[{",".join(parts)}]}}'


_OK_METADATA = ',"metadata":{"status":"ok","error":null}}'
