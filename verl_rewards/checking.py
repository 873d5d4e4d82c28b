"""Check installed plugins: import, validate the shape, run self-test examples.

``verl-rewards check`` and the pytest plugin (:mod:`verl_rewards.pytest_plugin`)
both run exactly this. Every function returns immutable records; nothing
here prints or exits. Loading goes through :func:`verl_rewards.resolve.resolve`
(the same code every worker runs), and examples are scored by
:func:`verl_rewards.scoring.score_samples`, so a plugin that passes ``check``
loads and scores the same way in training.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import discovery
from ._inspect import RewardInfo
from .discovery import PluginRecord
from .errors import (
    AmbiguousPluginError,
    ConfigError,
    PluginNotFoundError,
    PluginShapeError,
    VerlRewardsError,
)
from .limits import DECLARED
from .metadata import Example
from .reference import RewardRef
from .resolve import LoadedReward, import_target, inspect_ref, resolve
from .scoring import score_samples


@dataclass(frozen=True)
class CheckReport:
    """The verdict on one plugin: ``ok`` when it loaded and every example passed."""

    plugin: PluginRecord
    ok: bool
    problems: tuple[str, ...]
    examples_run: int
    shape: str | None = None  # e.g. "sample, sync function"; None when it did not load

    def format(self) -> str:
        """A human-readable report: one line, plus one line per problem."""
        head = f"{'ok  ' if self.ok else 'FAIL'} {self.plugin.display_name}"
        if self.shape is not None:
            head += f": {self.shape}; {_examples_phrase(self)}"
        return "\n".join([head, *(f"     - {p}" for p in self.problems)])


def check_plugins(specs: Sequence[str] = ()) -> list[CheckReport]:
    """Check the plugins ``specs`` name (``name`` or ``dist:name``), or all installed."""
    records = discovery.find_plugins()
    selected = select_all(specs, records) if specs else list(records)
    return [check_plugin(record) for record in selected]


def check_named(spec: str) -> CheckReport:
    """Check the one installed plugin ``spec`` names."""
    return check_plugin(discovery.select(spec))


def select_all(specs: Sequence[str], records: Sequence[PluginRecord]) -> list[PluginRecord]:
    """The records ``specs`` name, in order; every unknown or ambiguous name in one error."""
    selected: list[PluginRecord] = []
    problems: list[ConfigError] = []
    for spec in dict.fromkeys(specs):
        try:
            selected.append(discovery.select(spec, records))
        except (PluginNotFoundError, AmbiguousPluginError) as e:
            problems.append(e)
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise ConfigError(" ".join(str(p) for p in problems))
    return selected


def check_plugin(record: PluginRecord) -> CheckReport:
    """Load ``record``'s target (validating its shape) and run its examples."""
    try:
        loaded = load_for_inspection(record)
    except (Exception, SystemExit) as e:  # noqa: BLE001 - a plugin may even sys.exit on import
        return CheckReport(record, False, (_load_problem(record.display_name, e),), 0)
    examples = loaded.meta.examples
    problems = tuple(
        problem
        for number, example in enumerate(examples, 1)
        if (problem := run_example(loaded, example, number)) is not None
    )
    return CheckReport(record, not problems, problems, len(examples), describe_shape(loaded))


def load_for_inspection(record: PluginRecord) -> LoadedReward:
    """Load ``record``'s reward as ``check`` and ``show`` see it: bare, or, for a
    class whose constructor needs kwargs (a judge's URL, say), with the kwargs of
    its first example that has some: those are what it is meant to run with.

    Raises what the bare load raised when that does not help either.
    """
    ref = RewardRef.from_plugin(record)
    try:
        return resolve(ref)
    except PluginShapeError:
        retried = _resolve_with_example_kwargs(ref)
        if retried is None:
            raise
        return retried


def inspect_plugin(record: PluginRecord) -> tuple[object, RewardInfo]:
    """``record``'s imported target and its :class:`RewardInfo` (``show``): nothing is built."""
    ref = RewardRef.from_plugin(record)
    return import_target(ref), inspect_ref(ref)


def run_example(loaded: LoadedReward, example: Example, number: int = 1) -> str | None:
    """Score one self-test example; ``None`` when it passed, else what went wrong."""
    label = f"example {number} ({_inputs(example)})"
    if example.kwargs:
        try:
            loaded = resolve(loaded.ref.with_kwargs({**loaded.ref.kwargs, **example.kwargs}))
        except (Exception, SystemExit) as e:  # noqa: BLE001 - reported, not raised
            return f"{label}: cannot bind kwargs {dict(example.kwargs)}: {_load_problem(loaded.display_name, e)}"
    outcome = score_samples(loaded, [example.as_sample()], DECLARED.for_reward(loaded))[0]
    if outcome.status != "ok":
        return f"{label}: {outcome.error or outcome.status}"
    assert outcome.score is not None
    if abs(outcome.score - example.expected) > example.tolerance:
        return f"{label}: expected {example.expected!r}, got {outcome.score!r}"
    return None


def _resolve_with_example_kwargs(ref: RewardRef) -> LoadedReward | None:
    """Load a class with the first example's kwargs, if it declares any."""
    try:
        info = inspect_ref(ref)
    except (Exception, SystemExit):  # noqa: BLE001 - the bare load already reported it
        return None
    with_kwargs = [e for e in info.meta.examples if e.kwargs]
    if not info.is_class or not with_kwargs:
        return None
    try:
        return resolve(ref.with_kwargs(with_kwargs[0].kwargs))
    except (Exception, SystemExit):  # noqa: BLE001 - reported per example below
        return None


def describe_shape(reward: LoadedReward | RewardInfo) -> str:
    """``sample, async function`` / ``batch, sync class``: how the reward is called."""
    info = reward.info if isinstance(reward, LoadedReward) else reward
    assert info is not None  # every LoadedReward is classified from its RewardInfo
    kind = "class" if info.is_class else "function"
    return f"{info.shape}, {'async' if info.is_async else 'sync'} {kind}"


def _load_problem(display_name: str, error: BaseException) -> str:
    if isinstance(error, VerlRewardsError):  # already names the plugin, dist and cause
        return str(error)
    return f"cannot load reward {display_name}: {type(error).__name__}: {error}"


def _inputs(example: Example) -> str:
    text = f"solution_str={_short(example.solution_str)}, ground_truth={_short(example.ground_truth)}"
    return text + (f", kwargs={dict(example.kwargs)}" if example.kwargs else "")


def _short(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _examples_phrase(report: CheckReport) -> str:
    if report.examples_run == 0:
        return "no self-test examples declared"
    passed = report.examples_run - len(report.problems)
    noun = "example" if report.examples_run == 1 else "examples"
    return f"{passed}/{report.examples_run} {noun} passed"
