"""The resources a reward worker asks for: config keys, else the plugin's declaration."""

from __future__ import annotations

from verl_rewards import RewardRef
from verl_rewards.config import load_config
from verl_rewards.discovery import select
from verl_rewards.executors.hardware import declared_num_gpus, shortfall, worker_options

GPU_PLUGIN = {"plug_gpu.py": '''
from verl_rewards import reward

@reward(num_gpus=0.5)
class Model:
    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        return 1.0

def cpu_only(data_source, solution_str, ground_truth, extra_info=None):
    return 1.0
'''}


def _refs(make_dist, *names: str) -> tuple[RewardRef, ...]:
    make_dist("gpu-rewards", "1.0", {"gpu_model": "plug_gpu:Model", "cpu_only": "plug_gpu:cpu_only"},
              GPU_PLUGIN)
    return tuple(RewardRef.from_plugin(select(n)) for n in names)


def test_a_plugins_declared_gpus_are_the_default_request(make_dist) -> None:
    refs = _refs(make_dist, "gpu_model")
    options = worker_options(refs, load_config({"plugin": "gpu_model"}))
    assert options == {"num_cpus": 1.0, "num_gpus": 0.5}


def test_config_overrides_the_declaration_and_adds_custom_resources(make_dist) -> None:
    refs = _refs(make_dist, "gpu_model")
    config = load_config({"plugin": "gpu_model", "worker_num_gpus": 0, "worker_num_cpus": 2,
                          "worker_resources": {"accel": 1}})
    assert worker_options(refs, config) == {"num_cpus": 2, "resources": {"accel": 1}}


def test_a_plugin_declaring_nothing_asks_for_no_gpu_and_the_most_of_a_composite_wins(make_dist) -> None:
    assert declared_num_gpus(_refs(make_dist, "cpu_only")) == 0.0
    composite = tuple(RewardRef.from_plugin(select(n)) for n in ("cpu_only", "gpu_model"))
    assert declared_num_gpus(composite) == 0.5


def test_a_file_reward_is_not_executed_in_the_driver_to_read_its_declaration(reward_file) -> None:
    path = reward_file("raise SystemExit('executed in the driver')\n"
                       "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
                       "    return 1.0\n")
    assert declared_num_gpus((RewardRef.from_file(path, "compute_score"),)) == 0.0


def test_shortfall_names_each_resource_the_whole_cluster_lacks() -> None:
    options = {"num_cpus": 1, "num_gpus": 0.5, "resources": {"accel": 1}}
    assert shortfall(options, 2, {"CPU": 2, "GPU": 1, "accel": 2}) == []
    assert shortfall(options, 3, {"CPU": 2, "GPU": 1}) == [
        "3 worker(s) x 1 CPU = 3 but the cluster has 2",
        "3 worker(s) x 0.5 GPU = 1.5 but the cluster has 1",
        "3 worker(s) x 1 accel = 3 but the cluster has 0",
    ]
