"""``verl-rewards audit NAME``: try to break a reward the way RL policies do."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from ..metadata import KINDS
from .errors import EXIT_FAILURE, EXIT_OK
from .output import emit

if TYPE_CHECKING:
    from ..audit import AuditReport

NAME = "audit"
HELP = "Attack a reward (gaming, determinism, latency) before a run does."
EPILOG = f"""\
examples:
  verl-rewards audit gsm8k
  verl-rewards audit my_reward --kind math
  verl-rewards audit my-dist:my_reward --json
  verl-rewards audit my_reward --accept "the exact reference rounded to 2 places"

The attacks are built from the plugin's self-test examples, for its kind
({", ".join(KINDS)}): --kind, else @reward(kind=...), else generic. Each
finding says what to fix. A finding that is deliberate is accepted by its
probe name: --accept PROBE, or @reward(audit_accept={{PROBE: "why"}}); it is
reported as accepted, with the reason, and does not fail the audit. Exits 0
when nothing (else) is found, 1 when something is, 2 for a usage error or an
unknown plugin."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this command's arguments."""
    parser.add_argument("name", metavar="NAME", help="the plugin to audit (name or DIST:NAME)")
    parser.add_argument("--kind", choices=KINDS, default=None,
                        help="what the reward judges (default: its declared kind, else generic)")
    parser.add_argument("--accept", action="append", default=[], metavar="PROBE",
                        help="accept the finding of this probe as deliberate (repeatable); the "
                             "plugin's own @reward(audit_accept=...) gives its reasons")
    parser.add_argument("--json", action="store_true",
                        help='print {"plugin", "passed", "findings": [{"check", "probe", "detail"}]}, '
                             'and "accepted": [{..., "reason"}] when a finding was accepted')


def run(args: argparse.Namespace) -> int:
    """Audit the plugin and print the report."""
    from ..audit import audit

    report = audit(args.name, args.kind, accept=args.accept)
    if args.json:
        emit(json.dumps(report.as_json(), indent=2))
    else:
        emit(*format_report(report))
    return EXIT_OK if report.passed else EXIT_FAILURE


def format_report(report: AuditReport) -> list[str]:
    """The human-readable report: what was tried, then each finding with its fix."""
    from ..audit.run import THREADS

    lines = [f"audit {report.display_name} as {report.kind} ({report.kind_source})",
             f"  hack:        {report.probes_run} probes from {report.examples_used} example(s)"]
    runs = ", ".join(f"{kind} {n}x" for kind, n in report.runs if n)
    lines.append(f"  determinism: every input run again{f' ({runs})' if runs else ''}, the examples "
                 f"also in {THREADS} threads at once and in a fresh process")
    if report.latency is not None:
        lat = report.latency
        lines.append(f"  latency:     p50 {_ms(lat.p50_s)}, p95 {_ms(lat.p95_s)}, max {_ms(lat.max_s)} "
                     f"over {lat.calls} calls (timeout {lat.timeout_s:g} s)")
    lines += [f"  note: {note}" for note in report.notes]
    if report.accepted:
        lines.append(f"accepted {len(report.accepted)} finding(s) as deliberate:")
        lines += [f"  - {a.finding.check} / {a.finding.probe}: {a.finding.detail} (accepted: {a.reason})"
                  for a in report.accepted]
    if report.passed:
        return [*lines, "passed: nothing found" + (f" ({len(report.accepted)} accepted)" if report.accepted else "")]
    lines.append(f"FOUND {len(report.findings)} problem(s):")
    lines += [f"  - {f.check} / {f.probe}: {f.detail}" for f in report.findings]
    return lines


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"
