"""A reward file for bench_crash_isolation.py: a real segfault on request."""

import ctypes


def segfault_on_request(data_source, solution_str, ground_truth, extra_info=None):
    """Segfault the process when the response is ``segfault``; else exact match."""
    if solution_str == "segfault":
        ctypes.string_at(0)
    return 1.0 if solution_str == ground_truth else 0.0
