"""``verl-rewards audit``: try to break a reward the way an RL policy would.

Attacks built from the plugin's self-test examples for its kind (``hack``),
the same inputs run again, in threads and in a fresh process
(``determinism``), and long or odd inputs timed against its timeout
(``latency``). Scoring runs in a child process under hard deadlines.
"""

from __future__ import annotations

from .records import Accepted, AuditReport, Finding, Latency
from .run import audit, choose_kind

__all__ = ["Accepted", "AuditReport", "Finding", "Latency", "audit", "choose_kind"]
