"""Audit one plugin: attack it, run it three ways, time it; collect the findings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .. import discovery
from ..checking import load_for_inspection
from ..errors import ConfigError
from ..limits import DEFAULT_TIMEOUT_S
from ..metadata import KINDS, Example, Kind, RewardMeta
from . import attacks_code, attacks_math, attacks_text
from .child import Answers, Step, StepFailure, run_steps
from .determinism import determinism_findings
from .hack import Controls, control_findings, probe_findings
from .latency import latency_findings, odd_inputs, summarize
from .records import AuditReport, Finding, Probe, Scored

MAX_TARGETS: Final = 3  # self-test examples the attacks are built from
THREADS: Final = 4

ControlsFn = Callable[[Example], tuple[str, str]]
ProbesFn = Callable[[int, Example], list[Probe]]
AGAIN, THREADED, FRESH = "again in the same process", f"in {THREADS} threads at once", "in a fresh process"
ATTACKS: Final[Mapping[str, tuple[ControlsFn, ProbesFn]]] = {
    "math": (attacks_math.controls, attacks_math.probes),
    "code": (attacks_code.controls, attacks_code.probes),
    "format": (attacks_text.format_controls, attacks_text.format_probes),
    "judge": (attacks_text.judge_controls, attacks_text.judge_probes),
    "generic": (attacks_text.generic_controls, attacks_text.generic_probes),
}


def audit(spec: str, kind: str | None = None) -> AuditReport:
    """Audit the installed plugin ``spec`` (``name`` or ``dist:name``) as ``kind``
    (default: its declared kind, else generic)."""
    record = discovery.select(spec)
    meta = load_for_inspection(record).meta
    chosen, source = choose_kind(kind, meta)
    timeout = meta.timeout_s or DEFAULT_TIMEOUT_S
    plan = _plan(meta, chosen)
    with ThreadPoolExecutor(2) as pool:  # the fresh and the timing processes run beside the main one
        later = [pool.submit(run_steps, record.qualified_name, steps, timeout)
                 for steps in (plan.fresh_steps, plan.timing_steps)]
        main = run_steps(record.qualified_name, plan.steps, timeout)
        fresh, timing = (f.result() for f in later)
    findings = [*_hack(plan, main), *_determinism(plan, main, fresh), *_latency(plan, main, timing, timeout)]
    findings += _failures(plan, [*main.failures, *fresh.failures, *timing.failures])
    seconds = [r.seconds for answers in (main, timing) for runs in answers.runs.values() for r in runs[0]]
    return AuditReport(
        plugin=record.name, display_name=record.display_name, kind=chosen, kind_source=source,
        findings=tuple(findings), probes_run=len(plan.probes),
        examples_used=len(plan.targets), latency=summarize(seconds, timeout) if seconds else None,
        notes=tuple(plan.notes),
    )


def choose_kind(kind: str | None, meta: RewardMeta) -> tuple[Kind, str]:
    """The kind to audit as, and where it came from: ``--kind``, metadata or the default."""
    if kind is not None:
        if kind not in KINDS:
            raise ConfigError(f"audit: kind must be one of {', '.join(KINDS)}, not {kind!r}")
        return kind, "--kind"
    if meta.kind is not None:
        return meta.kind, "metadata"
    return "generic", "default"


def targets(examples: Sequence[Example]) -> list[int]:
    """The self-test examples to attack (at most ``MAX_TARGETS``, one per reference and
    kwargs): those expecting the top score (right answers) first, then others that earn
    something (partly right)."""
    if not examples:
        return []
    top, bottom = max(e.expected for e in examples), min(e.expected for e in examples)
    best = [i for i, e in enumerate(examples) if e.expected == top]
    partial = [i for i, e in enumerate(examples) if bottom < e.expected < top]
    chosen: dict[str, int] = {}
    for index in [*best, *partial]:  # one per reference and kwargs: the attacks are built from them
        example = examples[index]
        chosen.setdefault(repr((example.ground_truth, sorted(example.kwargs.items()))), index)
    return list(chosen.values())[:MAX_TARGETS]


@dataclass
class _Plan:
    """The steps of one audit, and what each step's answer means."""

    examples: tuple[Example, ...]
    targets: list[int]
    steps: list[Step] = field(default_factory=list)
    fresh_steps: list[Step] = field(default_factory=list)  # the determinism check's fresh process
    timing_steps: list[Step] = field(default_factory=list)  # long and odd inputs, in a process of their own
    controls: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # example -> step ids
    wrong_text: dict[int, str] = field(default_factory=dict)
    probes: list[tuple[Probe, int]] = field(default_factory=list)
    odd: list[tuple[str, int]] = field(default_factory=list)
    determinism: dict[str, list[int]] = field(default_factory=dict)  # mode -> step id per example
    deterministic: list[int] = field(default_factory=list)  # the examples run three ways
    labels: dict[int, str] = field(default_factory=dict)  # step id -> what it scores
    notes: list[str] = field(default_factory=list)

    def add(self, label: str, example: Example, response: str, threads: int = 0,
            process: Literal["main", "fresh", "timing"] = "main") -> int:
        step_id = len(self.steps) + len(self.fresh_steps) + len(self.timing_steps)
        step = Step(step_id, dict(example.kwargs), (_sample(example, response),), threads)
        {"main": self.steps, "fresh": self.fresh_steps, "timing": self.timing_steps}[process].append(step)
        self.labels[step_id] = label
        return step_id


def _plan(meta: RewardMeta, kind: str) -> _Plan:
    plan = _Plan(meta.examples, targets(meta.examples))
    make_controls, make_probes = ATTACKS[kind]
    for index in plan.targets:
        example = meta.examples[index]
        none, wrong = make_controls(example)
        plan.wrong_text[index] = wrong
        plan.controls[index] = (plan.add(f"example {index + 1}", example, example.solution_str),
                                plan.add("no answer", example, none), plan.add("a wrong answer", example, wrong))
        for probe in make_probes(index, example):
            plan.probes.append((probe, plan.add(probe.name, example, probe.solution_str)))
    for number, example in enumerate(meta.adversarial, 1):
        probe = Probe(f"declared adversarial example {number}", example.solution_str, -1, "declared",
                      "", example.expected)
        plan.probes.append((probe, plan.add(probe.name, example, example.solution_str)))
    if not meta.examples:
        plan.notes.append("no self-test examples: no attacks, no determinism runs")
    _plan_determinism(plan)
    base = meta.examples[plan.targets[0]] if plan.targets else Example("", "", 0.0)
    for name, text in odd_inputs():
        plan.odd.append((name, plan.add(name, base, text, process="timing")))
    return plan


def determinism_examples(examples: Sequence[Example], attacked: Sequence[int]) -> list[int]:
    """The attacked examples, plus the first one run with kwargs none of them uses (another
    code path: a symbolic check, a stricter mode), for the determinism runs."""
    seen = {repr(sorted(examples[i].kwargs.items())) for i in attacked}
    other = [i for i, e in enumerate(examples)
             if i not in attacked and repr(sorted(e.kwargs.items())) not in seen]
    return [*attacked, *other[:1]]


def _plan_determinism(plan: _Plan) -> None:
    """Those examples again, in threads, in a fresh process (an attacked one's first run is
    the hack stage's)."""
    plan.determinism = {"first": [], AGAIN: [], THREADED: [], FRESH: []}
    plan.deterministic = determinism_examples(plan.examples, plan.targets)
    for index in plan.deterministic:
        example = plan.examples[index]
        label = f"example {index + 1}"
        first = plan.controls[index][0] if index in plan.controls else plan.add(label, example, example.solution_str)
        plan.determinism["first"].append(first)
        plan.determinism[AGAIN].append(plan.add(label, example, example.solution_str))
        plan.determinism[THREADED].append(plan.add(label, example, example.solution_str, THREADS))
        plan.determinism[FRESH].append(plan.add(label, example, example.solution_str, process="fresh"))


def _sample(example: Example, response: str) -> dict[str, Any]:
    return {"data_source": example.data_source, "solution_str": response,
            "ground_truth": example.ground_truth, "extra_info": example.extra_info,
            "prompt": example.prompt}


def _first(answers: Answers, step_id: int) -> Scored | None:
    runs = answers.runs.get(step_id)
    return runs[0][0] if runs and runs[0] else None


def _hack(plan: _Plan, answers: Answers) -> list[Finding]:
    controls: dict[int, Controls] = {}
    for index, ids in plan.controls.items():
        got = [_first(answers, i) for i in ids]
        if all(g is not None for g in got):
            controls[index] = Controls(*got)  # type: ignore[arg-type]
    scored = [(probe, s) for probe, i in plan.probes if (s := _first(answers, i)) is not None]
    if not plan.targets:
        return [Finding("hack", "no self-test examples",
                        "the audit builds its attacks from the plugin's self-test examples and it declares "
                        "none: add @reward(examples=[...]) with at least one right answer")]
    if not any(c.right.status == "ok" and c.right.score > c.none.score for c in controls.values()):
        return [Finding("hack", "no usable example",
                        "no self-test example scores above a response without an answer, so no attack "
                        "can be judged: add an example whose right answer earns more than no answer")]
    return [*control_findings(controls, plan.wrong_text), *probe_findings(controls, scored)]


def _determinism(plan: _Plan, main: Answers, fresh: Answers) -> list[Finding]:
    labels = [f"example {i + 1}" for i in plan.deterministic]
    first = [_first(main, i) for i in plan.determinism["first"]]
    runs: list[tuple[str, list[Scored | None]]] = []
    for mode, ids in plan.determinism.items():
        if mode == "first":
            continue
        source = fresh if mode == FRESH else main
        if mode == THREADED:
            for t in range(THREADS):
                runs.append((mode, [_thread(source, i, t) for i in ids]))
        else:
            runs.append((mode, [_first(source, i) for i in ids]))
    found = determinism_findings(labels, first, runs)
    return list({f.probe: f for f in found}.values())


def _thread(answers: Answers, step_id: int, thread: int) -> Scored | None:
    runs = answers.runs.get(step_id)
    return runs[thread][0] if runs and len(runs) > thread and runs[thread] else None


def _latency(plan: _Plan, main: Answers, timing: Answers, timeout: float) -> list[Finding]:
    timed = [(name, s) for name, i in plan.odd if (s := _first(timing, i)) is not None]
    timed += [(probe.name, s) for probe, i in plan.probes if (s := _first(main, i)) is not None]
    return latency_findings(timed, timeout)


def _failures(plan: _Plan, failures: Sequence[StepFailure]) -> list[Finding]:
    found = []
    errors: dict[str, list[str]] = {}  # one finding per cause, not per step
    for failure in failures:
        if failure.reason == "error":
            errors.setdefault(failure.detail, []).append(plan.labels.get(failure.step, f"step {failure.step}"))
            continue
        label = plan.labels.get(failure.step, f"step {failure.step}")
        if failure.reason == "stuck":
            found.append(Finding("latency", label, f"{failure.detail}, beyond its timeout: the reward is "
                                 "stuck where the watchdog cannot interrupt it (C code?); bound its work"))
        elif failure.reason == "died":
            found.append(Finding("latency", label, f"{failure.detail}: a reward must fail one sample, "
                                 "never its process"))
    for detail, labels in errors.items():
        more = f" and {len(labels) - 1} more" if len(labels) > 1 else ""
        found.append(Finding("hack", labels[0], f"could not be scored ({labels[0]}{more}): {detail}"))
    return found
