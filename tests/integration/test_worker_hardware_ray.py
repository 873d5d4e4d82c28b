"""Reward workers ask Ray for GPUs and custom resources; class rewards are closed when the pool stops.

The shared session has only CPUs, so an impossible request must fail at
start, fast and clearly. The positive cases run in a subprocess with its own
``ray.init(num_gpus=1, resources={"accel": 2})``: Ray accounts GPUs it was
told about, so the request is measured from the cluster's available resources.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from verl_rewards import Scorer
from verl_rewards.errors import ExecutorError

pytestmark = pytest.mark.ray


def _cfg(**extra: object) -> dict[str, object]:
    return {"plugin": "exact_match", "executor": "ray", "num_workers": 2, "worker_num_cpus": 0, **extra}


@pytest.mark.parametrize(("extra", "message"), [
    ({"worker_resources": {"accel": 1}}, "2 worker(s) x 1 accel = 2 but the cluster has 0"),
    ({"worker_num_gpus": 0.5}, "2 worker(s) x 0.5 GPU = 1 but the cluster has 0"),
])
def test_a_request_the_cluster_cannot_meet_fails_at_start_naming_it(ray_session, extra, message) -> None:
    started = time.monotonic()
    with pytest.raises(ExecutorError) as caught:
        Scorer.from_config(_cfg(**extra)).start()
    assert time.monotonic() - started < 10
    assert message in str(caught.value)
    assert "exact_match (verl-rewards-testkit" in str(caught.value)


DRIVER = '''
import json, sys, time, ray
from verl_rewards import Scorer

ray.init(num_cpus=2, num_gpus=1, resources={"accel": 2}, include_dashboard=False,
         log_to_driver=False, configure_logging=False)
rows = [{"data_source": "d", "solution_str": "1", "ground_truth": "1"}] * 8

def used(config):
    with Scorer.from_config(config) as scorer:
        result = scorer.score(rows)
        free = ray.available_resources()
    return {"scores": result.scores, "gpu_free": free.get("GPU", 0.0), "accel_free": free.get("accel", 0.0),
            "cuda_visible": sorted(set(result.extra_info.get("cuda_visible", [])))}

base = {"executor": "ray", "num_workers": 2, "worker_num_cpus": 0}
report = {
    "configured": used({**base, "plugin": "exact_match", "worker_num_gpus": 0.5,
                        "worker_resources": {"accel": 1}}),
    "declared": used({**base, "plugin": "gpu_model", "kwargs": {"marker": sys.argv[1]}}),
}
deadline = time.monotonic() + 20  # ray.kill releases resources asynchronously
while ray.available_resources().get("GPU", 0.0) < 1 and time.monotonic() < deadline:
    time.sleep(0.1)
report["after"] = {"gpu_free": ray.available_resources().get("GPU", 0.0)}
print(json.dumps(report))
ray.shutdown()
'''

GPU_PLUGIN = '''
import os
from verl_rewards import reward

@reward(num_gpus=0.5)
class Model:
    def __init__(self, marker):
        self.marker = marker
    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        return {"score": 1.0, "cuda_visible": os.environ.get("CUDA_VISIBLE_DEVICES")}
    def close(self):
        with open(self.marker, "a") as f:
            f.write(f"{os.getpid()}\\n")
'''


@pytest.mark.slow
def test_gpu_and_custom_resources_are_requested_and_released_and_class_rewards_closed(make_dist, tmp_path) -> None:
    info = make_dist("gpu-rewards", "1.0", {"gpu_model": "plug_gpu:Model"}, {"plug_gpu.py": GPU_PLUGIN})
    marker = tmp_path / "closed.txt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(info.parent), os.environ.get("PYTHONPATH")]))}
    env.pop("RAY_ADDRESS", None)
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(DRIVER))
    done = subprocess.run([sys.executable, str(script), str(marker)], capture_output=True, text=True,
                          env=env, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # Two workers x (0.5 GPU + 1 accel) take the whole cluster while the pool runs ...
    assert report["configured"] == {"scores": [1.0] * 8, "gpu_free": 0.0, "accel_free": 0.0,
                                    "cuda_visible": []}
    # ... the plugin's own @reward(num_gpus=0.5) is the default when config sets none ...
    # (Ray points each GPU worker's CUDA_VISIBLE_DEVICES at the GPU it was given)
    assert report["declared"] == {"scores": [1.0] * 8, "gpu_free": 0.0, "accel_free": 2.0,
                                  "cuda_visible": ["0"]}
    # ... and everything is given back when the pool stops, after each worker closed its model.
    assert report["after"] == {"gpu_free": 1.0}
    assert len(set(Path(marker).read_text().split())) == 2
