"""What a ``score`` run is, kept beside its output so that ``--resume`` continues only
the same run: the same input, the same reward (version or source hash), the same
config as far as it decides a score (the ``reward`` and ``outcome`` roles of
:class:`~verl_rewards.config.RewardConfig`'s fields). How it runs (the ``run`` role:
executor, workers, a service's ``remote_url``, a shared pool, ...) may change.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import keys_with_role
from ..wire import json_data, provenance_to_json
from .errors import UsageError
from .rowbase import is_stdio, label

if TYPE_CHECKING:
    from ..config import RewardConfig
    from ..results import Provenance

FORMAT = 1
_CHOICE_KEYS = ("plugin", "path", "name")  # compared through the reward's provenance
# The config keys that decide a score, compared on --resume.
SCORING_KEYS = tuple(k for k in keys_with_role("reward", "outcome") if k not in _CHOICE_KEYS)


@dataclasses.dataclass(frozen=True)
class RunRecord:
    """The input's identity, the reward's provenance and the config that scores."""

    input: Mapping[str, Any]
    reward: Mapping[str, Any]
    config: Mapping[str, Any]

    @classmethod
    def of(cls, source: Path, provenance: Provenance, config: RewardConfig,
           columns: Mapping[str, str] | None = None) -> RunRecord:
        """The record of scoring ``source`` (read through ``--columns``, if given) with a
        scorer's ``provenance`` and ``config``."""
        section = json_data(config)
        scoring = {k: section[k] for k in SCORING_KEYS}
        identity = _input_identity(source)
        if columns:
            identity["columns"] = dict(sorted(columns.items()))
        return cls(identity, provenance_to_json(provenance), scoring)

    def to_json(self) -> str:
        """The record as the JSON text stored beside the output."""
        return json.dumps({"format": FORMAT, **dataclasses.asdict(self)}, indent=1, sort_keys=True)


def path_for(output: Path) -> Path:
    """The record's file: ``.NAME.run.json`` beside the output."""
    return output.with_name(f".{output.name}.run.json")


def save(output: Path, record: RunRecord) -> None:
    """Write ``record`` beside ``output`` (atomically: a crash leaves the old one or the new)."""
    target = path_for(output)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(record.to_json(), encoding="utf-8")
        os.replace(tmp, target)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {target} (what this run is, for --resume): "
                         f"{e.strerror or e}") from e


def check_resume(output: Path, record: RunRecord, kept: int) -> None:
    """Refuse to continue ``output`` (holding ``kept`` rows) with another run, naming what
    differs; an output with no rows can be continued by any run."""
    if not kept:
        return
    stored = _load(output)
    if stored is None:
        raise UsageError(
            f"cannot resume {output}: it holds {kept} rows but no record of the run that made "
            f"them ({path_for(output).name}), so mixing runs cannot be ruled out; score again "
            f"with --overwrite")
    differences = _differences(stored, record)
    if differences:
        raise UsageError(f"cannot resume {output}: {'; '.join(differences)}; score again with "
                         f"--overwrite, or write to another output")


def _load(output: Path) -> RunRecord | None:
    try:
        data = json.loads(path_for(output).read_text(encoding="utf-8"))
        return RunRecord(data["input"], data["reward"], data["config"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _differences(then: RunRecord, now: RunRecord) -> list[str]:
    found = []
    if then.input.get("sha256") != now.input.get("sha256"):
        found.append(f"its rows came from another input ({_describe_input(then.input)}; now "
                     f"{_describe_input(now.input)})")
    if then.input.get("columns") != now.input.get("columns"):
        found.append(f"its rows were read with --columns {_show_columns(then.input)}, now "
                     f"{_show_columns(now.input)}")
    if _reward_key(then.reward) != _reward_key(now.reward):
        found.append(f"its rows were scored by another reward ({_describe_reward(then.reward)}; "
                     f"now {_describe_reward(now.reward)})")
    for key in sorted(SCORING_KEYS):  # a record written before a key existed lacks it: null
        if then.config.get(key) != now.config.get(key):
            found.append(f"reward.{key} was {_show(then.config.get(key))}, now "
                         f"{_show(now.config.get(key))}")
    return found


def _reward_key(reward: Mapping[str, Any]) -> Any:
    """A reward's identity: a file by its source hash (it may have moved), a plugin by
    distribution and version; parts of a composite likewise."""
    ignored = {"display_name", "path"} if reward.get("source_hash") else {"display_name"}
    key = {k: v for k, v in reward.items() if k not in ignored and k != "components"}
    key["components"] = [_component_key(c) for c in reward.get("components") or ()]
    return key


def _component_key(component: Any) -> list[Any]:
    """A composite's component as the wire writes it (an object), or as records written
    before it did (``[key, weight, provenance]``)."""
    if isinstance(component, Mapping):
        return [component["key"], component["weight"], _reward_key(component["provenance"])]
    return [component[0], component[1], _reward_key(component[2])]


def _describe_reward(reward: Mapping[str, Any]) -> str:
    name = str(reward.get("display_name") or reward.get("name"))
    if reward.get("source_hash"):
        return f"{name}, source {str(reward['source_hash'])[:12]}"
    return name


def _input_identity(source: Path) -> dict[str, Any]:
    if is_stdio(source):  # read once, as it streams: its content cannot be known up front
        return {"file": label(source, "input"), "sha256": None}
    digest = hashlib.sha256()
    with source.open("rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return {"file": str(source), "sha256": digest.hexdigest(), "bytes": source.stat().st_size}


def _describe_input(identity: Mapping[str, Any]) -> str:
    digest = identity.get("sha256")
    return f"{identity.get('file')}, sha256 {digest[:12]}" if digest else str(identity.get("file"))


def _show_columns(identity: Mapping[str, Any]) -> str:
    columns = identity.get("columns") or {}
    return ",".join(f"{k}={v}" for k, v in columns.items()) or "(none)"


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)

