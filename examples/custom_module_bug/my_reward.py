"""A plain verl-style reward file: exactly what users point verl's
``custom_reward_function.path`` at."""

import re


def compute_score(data_source, solution_str, ground_truth, extra_info=None, partial_credit=0.0):
    """1.0 when the last number in the response equals the ground truth."""
    numbers = re.findall(r"-?\d+(?:\.\d+)?", solution_str.replace(",", ""))
    if not numbers:
        return 0.0
    return 1.0 if float(numbers[-1]) == float(ground_truth) else partial_credit
