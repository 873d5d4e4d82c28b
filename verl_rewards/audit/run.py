"""Audit one plugin: attack it, run it three ways, time it; collect the findings."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Final, Literal

from .. import discovery
from .._inspect import RewardInfo
from ..checking import inspect_plugin
from ..errors import ConfigError
from ..limits import DECLARED
from ..metadata import KINDS, Example, Kind, RewardMeta
from . import attacks_code, attacks_math, attacks_text
from .child import Answers, Step, StepFailure, containment, run_steps
from .determinism import Comparison, determinism_findings, runs_needed
from .hack import Controls, control_findings, probe_findings
from .latency import died_finding, latency_findings, odd_inputs, silent_finding, stuck_finding, summarize
from .records import Accepted, AuditReport, Finding, Probe, Scored

MAX_TARGETS: Final = 3  # self-test examples the attacks are built from
THREADS: Final = 4

ControlsFn = Callable[[Example], tuple[str, str]]
ProbesFn = Callable[[int, Example], list[Probe]]
AGAIN, THREADED, FRESH = "again in the same process", f"in {THREADS} threads at once", "in a fresh process"
ON_COMMAND_LINE = "--accept on the command line"
ATTACKS: Final[Mapping[str, tuple[ControlsFn, ProbesFn]]] = {
    "math": (attacks_math.controls, attacks_math.probes),
    "code": (attacks_code.controls, attacks_code.probes),
    "format": (attacks_text.format_controls, attacks_text.format_probes),
    "judge": (attacks_text.judge_controls, attacks_text.judge_probes),
    "generic": (attacks_text.generic_controls, attacks_text.generic_probes),
}


def audit(spec: str, kind: str | None = None, accept: Sequence[str] = ()) -> AuditReport:
    """Audit the installed plugin ``spec`` (``name`` or ``dist:name``) as ``kind``
    (default: its declared kind, else generic). Findings whose probe is named in
    ``accept`` (the command line's) or in the plugin's ``@reward(audit_accept=...)`` are
    reported as accepted, not as found.

    The plugin's metadata is read without building it: a class reward is built only in
    the scoring processes."""
    record = discovery.select(spec)
    info = inspect_plugin(record)[1]
    meta = info.meta
    chosen, source = choose_kind(kind, meta)
    timeout = timeout_of(info)
    plan = _plan(meta, chosen)
    main, fresh, timing = _run(record.qualified_name, plan, timeout)
    findings = [*_hack(plan, main), *_determinism(plan, main, fresh), *_latency(plan, main, timing, timeout)]
    findings += _failures(plan, [*main.failures, *fresh.failures, *timing.failures], timeout)
    found, accepted, unused = accept_findings(findings, meta.audit_accept, accept)
    notes = [*plan.notes, *([containment().note] if containment().note else [])]
    notes += [f"accepted {name!r} ({why}), but the audit found nothing by that name" for name, why in unused]
    seconds = [r.seconds for answers in (main, timing) for runs in answers.runs.values() for r in runs[0]]
    return AuditReport(
        plugin=record.name, display_name=record.display_name, kind=chosen, kind_source=source,
        findings=tuple(found), probes_run=len(plan.probes),
        examples_used=len(plan.targets), latency=summarize(seconds, timeout) if seconds else None,
        notes=tuple(notes), accepted=tuple(accepted), runs=tuple(plan.runs.items()),
    )


def timeout_of(info: RewardInfo) -> float:
    """The per-sample timeout the plugin runs under when no config sets one (``limits``)."""
    timeout = DECLARED.for_reward(info).timeout_s
    assert timeout is not None  # DECLARED has a default, and a declaration is a number
    return timeout


def accept_findings(findings: Iterable[Finding], declared: Iterable[tuple[str, str]],
                    named: Iterable[str]) -> tuple[list[Finding], list[Accepted], list[tuple[str, str]]]:
    """Split ``findings`` into those still found and those accepted by probe name (with the
    plugin's own reason, else the command line's), and say which acceptances matched nothing."""
    reasons = {**dict.fromkeys(named, ON_COMMAND_LINE), **dict(declared)}
    found, accepted, used = [], [], set()
    for finding in findings:
        if finding.probe in reasons:
            accepted.append(Accepted(finding, reasons[finding.probe]))
            used.add(finding.probe)
        else:
            found.append(finding)
    return found, accepted, [(name, why) for name, why in reasons.items() if name not in used]


def _run(plugin: str, plan: _Plan, timeout: float) -> tuple[Answers, Answers, Answers]:
    """The main, the fresh and the timing processes' answers (the latter two run beside the
    main one); an interrupted audit stops all three and leaves nothing running."""
    cancel = threading.Event()
    with ThreadPoolExecutor(2) as pool:
        later = [pool.submit(run_steps, plugin, steps, timeout, cancel=cancel)
                 for steps in (plan.fresh_steps, plan.timing_steps)]
        try:
            main = run_steps(plugin, plan.steps, timeout, cancel=cancel)
            fresh, timing = (f.result() for f in later)
        except BaseException:
            cancel.set()
            raise
    return main, fresh, timing


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


@dataclass(frozen=True)
class _Repeat:
    """One input scored more than once: its first run, and the steps that run it again."""

    label: str
    first: int  # step id in the main process
    again: int | None = None  # a main step of one or more runs, each compared with the first
    threaded: int | None = None  # a main step run by THREADS threads at once
    fresh: int | None = None  # a fresh-process step: its first run vs the first, the rest vs its own


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
    repeats: list[_Repeat] = field(default_factory=list)  # the determinism runs
    runs: dict[str, int] = field(default_factory=dict)  # kind of input -> runs of each
    labels: dict[int, str] = field(default_factory=dict)  # step id -> what it scores
    notes: list[str] = field(default_factory=list)

    def add(self, label: str, example: Example, response: str, threads: int = 0,
            process: Literal["main", "fresh", "timing"] = "main", times: int = 1) -> int:
        """A step scoring ``response`` against ``example`` ``times`` times in a row (or once
        in each of ``threads`` threads) in ``process``; its id."""
        step = Step(self._next_id(), dict(example.kwargs), (example.as_sample(response)._asdict(),) * times,
                    threads)
        return self._append(step, label, process)

    def again(self, step_id: int, label: str, times: int = 1, threads: int = 0,
              process: Literal["main", "fresh"] = "main") -> int:
        """A step scoring main step ``step_id``'s sample again; its id."""
        first = next(s for s in self.steps if s.id == step_id)
        step = Step(self._next_id(), first.kwargs, first.samples[:1] * times, threads)
        return self._append(step, label, process)

    def _next_id(self) -> int:
        return len(self.steps) + len(self.fresh_steps) + len(self.timing_steps)

    def _append(self, step: Step, label: str, process: str) -> int:
        {"main": self.steps, "fresh": self.fresh_steps, "timing": self.timing_steps}[process].append(step)
        self.labels[step.id] = label
        return step.id


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


# An example's fixed runs: the first, one in each of THREADS threads, one in a fresh process.
EXAMPLE_RUNS: Final = 2 + THREADS
TWICE: Final = 2  # an input's runs when no guarantee needs more


def _plan_determinism(plan: _Plan) -> None:
    """Run the inputs that can vary again: the examples in the same process, in threads
    and in a fresh process; the controls and every attack in the fresh process (their
    first runs are the hack stage's, in the main one: the two processes share the work).

    How often: a reward that scores differently one call in five on the wrong answers
    alone, or on the examples alone, is found 99 times in 100 (:func:`.determinism.
    runs_needed`: 21 runs of each for one attacked example, 11 for two, 7 for three).
    Every other input (a response without an answer, each attack) runs twice, which
    finds a one-in-five variation on that kind alone 99 times in 100 from 12 inputs on
    (math has 36 attacks from three examples; code 11 from two: 98.6%). Over the hack
    stage's one run of each, that costs ``t (runs_needed(t) - 1)`` wrong answers (20
    for t = 1 or 2, 18 for t = 3) plus one run per other input."""
    chosen = determinism_examples(plan.examples, plan.targets)
    plan.runs["examples"] = max(runs_needed(len(chosen)), EXAMPLE_RUNS + 1) if chosen else 0
    for index in chosen:
        example, label = plan.examples[index], f"example {index + 1}"
        first = plan.controls[index][0] if index in plan.controls else plan.add(label, example, example.solution_str)
        plan.repeats.append(_Repeat(
            label, first, again=plan.again(first, label, times=plan.runs["examples"] - EXAMPLE_RUNS),
            threaded=plan.again(first, label, threads=THREADS), fresh=plan.again(first, label, process="fresh")))
    plan.runs["wrong answers"] = runs_needed(len(plan.controls))
    plan.runs["no answers"] = plan.runs["attacks"] = TWICE if plan.controls else 0
    for index, (_, none, wrong) in plan.controls.items():
        _again_fresh(plan, f"a wrong answer (example {index + 1})", wrong, plan.runs["wrong answers"])
        _again_fresh(plan, f"no answer (example {index + 1})", none, TWICE)
    for probe, step_id in plan.probes:
        _again_fresh(plan, f"{probe.name}{f' (example {probe.example + 1})' if probe.example >= 0 else ''}",
                     step_id, TWICE)


def _again_fresh(plan: _Plan, label: str, first: int, runs: int) -> None:
    """``runs - 1`` more runs of main step ``first``'s input, in the fresh process."""
    if runs > 1:
        plan.repeats.append(_Repeat(label, first, fresh=plan.again(first, f"{label}, again", runs - 1,
                                                                   process="fresh")))


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
    comparisons: list[Comparison] = []
    for repeat in plan.repeats:
        first = _first(main, repeat.first)
        for step_id, mode in ((repeat.again, AGAIN), (repeat.threaded, THREADED)):
            comparisons += [Comparison(repeat.label, mode, first, later) for later in _results(main, step_id)]
        again = _results(fresh, repeat.fresh)
        if again:
            comparisons.append(Comparison(repeat.label, FRESH, first, again[0]))
            comparisons += [Comparison(repeat.label, AGAIN, again[0], later) for later in again[1:]]
    return determinism_findings(comparisons)


def _results(answers: Answers, step_id: int | None) -> list[Scored]:
    """Every result of a step: each run's (each thread's) samples, in order."""
    if step_id is None:
        return []
    return [result for run in answers.runs.get(step_id, []) for result in run]


def _latency(plan: _Plan, main: Answers, timing: Answers, timeout: float) -> list[Finding]:
    timed = [(name, s) for name, i in plan.odd if (s := _first(timing, i)) is not None]
    timed += [(probe.name, s) for probe, i in plan.probes if (s := _first(main, i)) is not None]
    return latency_findings(timed, timeout)


def _failures(plan: _Plan, failures: Sequence[StepFailure], timeout_s: float = 30.0) -> list[Finding]:
    found = []
    errors: dict[str, list[str]] = {}  # one finding per cause, not per step
    for failure in failures:
        label = plan.labels.get(failure.step, f"step {failure.step}")
        if failure.reason == "error":
            errors.setdefault(failure.detail, []).append(label)
            continue
        step = _step(plan, failure.step)
        if failure.reason == "stuck":
            found.append(stuck_finding(label, failure.detail, timeout_s, len(step.samples) if step else 1,
                                       failure.stderr))
        elif failure.reason == "died":
            response = step.samples[0].get("solution_str") if step and step.samples else None
            found.append(died_finding(label, failure.detail, failure.returncode,
                                      len(response) if isinstance(response, str) else None, failure.stderr))
        elif failure.reason == "silent":
            found.append(silent_finding(label, failure.detail, failure.stderr))
    for detail, labels in errors.items():
        more = f" and {len(labels) - 1} more" if len(labels) > 1 else ""
        found.append(Finding("hack", labels[0], f"could not be scored ({labels[0]}{more}): {detail}"))
    return found


def _step(plan: _Plan, step_id: int) -> Step | None:
    return next((s for s in (*plan.steps, *plan.fresh_steps, *plan.timing_steps) if s.id == step_id), None)
