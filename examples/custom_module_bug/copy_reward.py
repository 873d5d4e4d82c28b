"""A plain verl-style reward file for the trainer demo's task (copy the prompt's digits).

No imports, no decorator: the kind of file verl's ``custom_reward_function.path``
takes, selected by ``reward.path=examples/custom_module_bug/copy_reward.py``.
"""


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """0.75 x the share of ground_truth's characters in place + 0.25 for the right length."""
    target = str(ground_truth)
    in_place = sum(a == b for a, b in zip(solution_str, target)) / len(target)
    return 0.75 * in_place + 0.25 * (len(solution_str) == len(target))
