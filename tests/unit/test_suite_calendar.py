"""A test is a function of the commit: no test reads the calendar.

The learning test once took its seed from ``date.today()``, so the same commit
failed one day in five. Any test that picks a seed, a case or a threshold from the
day would do the same; this finds calls that read the date or the wall-clock time of
day in every test file (elapsed time via ``time.monotonic``/``perf_counter`` is fine).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# attribute calls that read the calendar: date.today(), datetime.now(), time.localtime() ...
CALENDAR = {"today", "now", "utcnow", "localtime", "gmtime", "ctime", "asctime", "toordinal"}


def _calendar_reads(source: str) -> list[str]:
    """``name.attr(...)`` calls in ``source`` whose attribute reads the calendar."""
    return [f"line {node.lineno}: {ast.unparse(node.func)}()"
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in CALENDAR]


def _test_files() -> list[Path]:
    return sorted([*ROOT.glob("tests/**/*.py"), *ROOT.glob("plugins/*/tests/**/*.py")])


def test_the_finder_sees_a_date_seed():
    assert _calendar_reads("import datetime\nseed = datetime.date.today().toordinal() % 5\n") == [
        "line 2: datetime.date.today().toordinal()", "line 2: datetime.date.today()"]
    assert _calendar_reads("import time\nt = time.monotonic()\n") == []


def test_no_test_reads_the_date_or_the_time_of_day():
    files = _test_files()
    assert len(files) > 100, "the test files were not found"
    found = {str(path.relative_to(ROOT)): reads for path in files
             if (reads := _calendar_reads(path.read_text(encoding="utf-8")))}
    assert found == {}
