"""A reward file as verl users write them for ``custom_reward_function.path``: their own
dataset scored here, every other data source handed to verl's ``default_compute_score``.

docs/integrations/verl.md ("Coming from custom_reward_function.path") publishes it as a
plugin unchanged; tests/integration/test_verl_migration.py follows those steps and checks
that verl scores the same with it before and after.
"""

from verl.utils.reward_score import default_compute_score


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if data_source == "my_dataset":  # the last word of the response is the answer
        words = solution_str.split()
        return 1.0 if words and words[-1] == str(ground_truth) else 0.0
    return default_compute_score(data_source, solution_str, ground_truth, extra_info)
