"""The resources a reward worker asks for: config keys, else the plugin's declaration."""

from __future__ import annotations

from verl_rewards import Scorer
from verl_rewards.config import load_config
from verl_rewards.executors.hardware import shortfall, unplaceable, worker_options

GPU_PLUGIN = {"plug_gpu.py": '''
from verl_rewards import reward

@reward(num_gpus=0.5)
class Model:
    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        return 1.0

def cpu_only(data_source, solution_str, ground_truth, extra_info=None):
    return 1.0
'''}


def _declared_gpus(make_dist, section: dict) -> float:
    make_dist("gpu-rewards", "1.0", {"gpu_model": "plug_gpu:Model", "cpu_only": "plug_gpu:cpu_only"},
              GPU_PLUGIN)
    return Scorer.from_config({"executor": "local", **section}).info.num_gpus


def test_a_plugins_declared_gpus_are_the_default_request(make_dist) -> None:
    gpus = _declared_gpus(make_dist, {"plugin": "gpu_model"})
    assert worker_options(load_config({"plugin": "gpu_model"}), gpus) == {"num_cpus": 1.0, "num_gpus": 0.5}


def test_config_overrides_the_declaration_and_adds_custom_resources(make_dist) -> None:
    gpus = _declared_gpus(make_dist, {"plugin": "gpu_model"})
    config = load_config({"plugin": "gpu_model", "worker_num_gpus": 0, "worker_num_cpus": 2,
                          "worker_resources": {"accel": 1}})
    assert worker_options(config, gpus) == {"num_cpus": 2, "resources": {"accel": 1}}


def test_a_plugin_declaring_nothing_asks_for_no_gpu_and_the_most_of_a_composite_wins(make_dist) -> None:
    assert _declared_gpus(make_dist, {"plugin": "cpu_only"}) == 0.0
    rewards = {"a": {"plugin": "cpu_only"}, "b": {"plugin": "gpu_model"}}
    assert Scorer.from_config({"executor": "local", "rewards": rewards}).info.num_gpus == 0.5


def test_an_unplaceable_pool_names_the_keys_under_the_hosts_prefix() -> None:
    config = load_config({"plugin": "p", "num_workers": 4, "worker_num_cpus": 2})
    problem = unplaceable(worker_options(config), config, {"CPU": 2.0}, prefix="reward.verl_rewards.")
    assert problem is not None and problem.startswith("4 worker(s) x 2 CPU = 8 but the cluster has 2. "
                                                      "Lower reward.verl_rewards.num_workers, "
                                                      "reward.verl_rewards.worker_num_cpus")
    assert unplaceable(worker_options(config), config, {"CPU": 8.0}) is None


def test_shortfall_names_each_resource_the_whole_cluster_lacks() -> None:
    options = {"num_cpus": 1, "num_gpus": 0.5, "resources": {"accel": 1}}
    assert shortfall(options, 2, {"CPU": 2, "GPU": 1, "accel": 2}) == []
    assert shortfall(options, 3, {"CPU": 2, "GPU": 1}) == [
        "3 worker(s) x 1 CPU = 3 but the cluster has 2",
        "3 worker(s) x 0.5 GPU = 1.5 but the cluster has 1",
        "3 worker(s) x 1 accel = 3 but the cluster has 0",
    ]
