from __future__ import annotations

import linecache
import sys
import traceback

import pytest

from verl_rewards import RewardRef
from verl_rewards.errors import PluginLoadError, PluginNotInstalledError, PluginShapeError
from verl_rewards.resolve import register_source, resolve

SHAPES = '''
import asyncio, threading

def sample(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    return float(solution_str == ground_truth)

def batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    return [float(s == g) for s, g in zip(solution_strs, ground_truths)]

async def asample(data_source, solution_str, ground_truth, extra_info=None):
    await asyncio.sleep(0)
    return 1.0

def positional(ds, sol, gt):
    return 2.0

class Judge:
    built = 0
    def __init__(self, threshold=0.5):
        Judge.built += 1
        self.lock = threading.Lock()
        self.threshold = threshold
    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        return self.threshold

class NotCallable:
    pass

NUMBER = 3

def two_args(a, b):
    return 0.0

def strict_kwargs(data_source, solution_str, ground_truth, extra_info=None):
    return 0.0

class _Lazy:
    @property
    def __signature__(self):
        raise TypeError("instances of _Lazy have no signature until configure() is called")
    def __call__(self, *args):
        return 0.0

LAZY = _Lazy()
'''


@pytest.fixture
def shapes(reward_file):
    path = reward_file(SHAPES, "shapes.py")
    return lambda name, **kw: RewardRef.from_file(path, name, kw)


@pytest.mark.parametrize(
    ("name", "shape", "is_async", "is_class"),
    [("sample", "sample", False, False), ("batch", "batch", False, False),
     ("asample", "sample", True, False), ("Judge", "sample", False, True)],
)
def test_classifies_each_shape_by_inspection(shapes, name, shape, is_async, is_class):
    loaded = resolve(shapes(name))
    assert (loaded.shape, loaded.is_async, loaded.is_class) == (shape, is_async, is_class)


def test_load_returns_a_verl_signature_callable_for_every_shape(shapes):
    for name in ("sample", "batch", "asample", "Judge"):
        fn = shapes(name).load()
        assert fn("src", "x", "x", None) == (0.5 if name == "Judge" else 1.0)


def test_positional_parameters_with_other_names_are_called_positionally(shapes):
    assert shapes("positional").load()("src", "a", "b") == 2.0


def test_class_is_instantiated_once_per_process_with_kwargs(shapes):
    ref = shapes("Judge", threshold=0.75)
    first, second = resolve(ref), resolve(ref)
    assert first.call is second.call
    assert first.target.built == 1
    assert ref.load()("s", "a", "b") == 0.75


def test_not_callable_target_is_a_shape_error_naming_the_plugin(shapes):
    with pytest.raises(PluginShapeError, match=r"NUMBER \(file .*shapes.py.*target is a int"):
        resolve(shapes("NUMBER"))


def test_class_with_uncallable_instances_is_a_shape_error(shapes):
    with pytest.raises(PluginShapeError, match="instances of the class are not callable"):
        resolve(shapes("NotCallable"))


def test_a_signature_that_cannot_be_read_is_said_so_whatever_its_message_starts_with(shapes):
    with pytest.raises(PluginShapeError) as raised:
        resolve(shapes("LAZY"))
    assert str(raised.value).endswith(
        "cannot inspect the target's signature: TypeError: instances of _Lazy have no signature "
        "until configure() is called")
    assert type(raised.value.cause) is TypeError


def test_signature_that_fits_no_shape_fails_at_load_not_at_call(shapes):
    with pytest.raises(PluginShapeError, match=r"signature \(a, b\) cannot be called"):
        resolve(shapes("two_args"))


def test_kwargs_the_reward_does_not_accept_fail_at_load(shapes):
    with pytest.raises(PluginShapeError, match=r"reward.kwargs \['strict'\]"):
        resolve(shapes("strict_kwargs", strict=True))


def test_plugin_import_error_names_plugin_and_distribution(make_dist):
    make_dist("oops-rewards", "0.2", "[verl_rewards]\noops = tp_oops:f\n",
              {"tp_oops.py": "import definitely_missing_dependency\n"})
    ref = RewardRef.from_config({"plugin": "oops"})
    with pytest.raises(PluginLoadError) as info:
        resolve(ref)
    assert not isinstance(info.value, PluginNotInstalledError)
    assert "oops (oops-rewards 0.2)" in str(info.value)
    assert "definitely_missing_dependency" in str(info.value)


def test_plugin_whose_module_is_absent_is_reported_as_not_installed(make_dist):
    make_dist("ghost-rewards", "0.9", "[verl_rewards]\nghost = tp_ghost.mod:f\n")
    with pytest.raises(PluginNotInstalledError, match=r"pip install ghost-rewards==0.9"):
        resolve(RewardRef.from_config({"plugin": "ghost"}))


def test_missing_attribute_in_plugin_module(make_dist):
    make_dist("attr-rewards", "1.0", "[verl_rewards]\nattr = tp_attr:nope\n", {"tp_attr.py": "x = 1\n"})
    with pytest.raises(PluginLoadError, match="tp_attr has no attribute 'nope'"):
        resolve(RewardRef.from_config({"plugin": "attr"}))


def test_plugin_loads_by_its_real_module_name(make_dist):
    make_dist("real-rewards", "1.0", "[verl_rewards]\nreal = tp_real.scores:score\n",
              {"tp_real/__init__.py": "", "tp_real/scores.py":
               "def score(data_source, solution_str, ground_truth, extra_info=None):\n    return 1.0\n"})
    loaded = resolve(RewardRef.from_config({"plugin": "real"}))
    assert loaded.target.__module__ == "tp_real.scores"
    assert "custom_module" not in sys.modules


def test_file_importing_a_sibling_module_explains_how_to_package_it(reward_file):
    sibling = reward_file("VALUE = 1\n", "helpers_sibling.py")
    path = reward_file("import helpers_sibling\ndef compute_score(a, b, c, d=None):\n    return 1.0\n")
    with pytest.raises(PluginLoadError) as info:
        RewardRef.from_file(path).load()
    assert str(info.value).split("): ", 1)[1] == (
        f"the reward file imports 'helpers_sibling' (at {path}:1), a module beside it ({sibling}). "
        "A file reward travels alone, without the modules beside it: package the reward and its "
        "modules as a plugin (`verl-rewards new NAME`) and pip install it where the reward runs: "
        "ModuleNotFoundError: No module named 'helpers_sibling'")


def test_file_importing_a_module_not_installed_says_so_not_sibling(reward_file):
    path = reward_file("import os\n\nimport numpyy\n\ndef compute_score(a, b, c, d=None):\n"
                       "    return 1.0\n")
    with pytest.raises(PluginLoadError) as info:
        RewardRef.from_file(path).load()
    assert str(info.value).split("): ", 1)[1] == (
        f"the reward file imports 'numpyy' (at {path}:3), which is not installed in this Python "
        f"environment ({sys.prefix}); install 'numpyy' here, or correct the name: "
        "ModuleNotFoundError: No module named 'numpyy'")


def test_file_importing_a_package_whose_own_import_fails_names_both(reward_file, make_dist):
    make_dist("tp-chain", "1.0", {}, {"tp_chain/__init__.py": "from . import core\n",
                                      "tp_chain/core.py": "import numpyy_deep\n"})
    path = reward_file("import tp_chain\ndef compute_score(a, b, c, d=None):\n    return 1.0\n")
    with pytest.raises(PluginLoadError) as info:
        RewardRef.from_file(path).load()
    assert str(info.value).split("): ", 1)[1].startswith(
        f"the reward file imports 'tp_chain', which imports 'numpyy_deep' (at {path}:1), which is "
        f"not installed in this Python environment ({sys.prefix}); install 'numpyy_deep' here")


def test_traceback_points_at_the_original_file_even_after_it_is_deleted(reward_file):
    path = reward_file("def compute_score(a, b, c, d=None):\n    raise ValueError('from my reward')\n")
    fn = RewardRef.from_file(path).load()
    path.unlink()
    with pytest.raises(ValueError) as info:
        fn("s", "x", "y")
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].filename == str(path)
    assert frames[-1].line == "raise ValueError('from my reward')"


def test_a_file_rewards_carried_source_gives_its_lines_where_the_file_is_gone(reward_file):
    path = reward_file("def compute_score(a, b, c, d=None):\n    return 1.0\n", "gone.py")
    ref = RewardRef.from_file(path)
    path.unlink()
    linecache.cache.pop(ref.path, None)
    register_source(ref)
    assert linecache.getline(ref.path, 2) == "    return 1.0\n"


def test_registering_a_plugins_source_leaves_linecache_alone():
    ref = RewardRef.from_config({"plugin": "exact_match"})
    before = dict(linecache.cache)
    register_source(ref)
    assert linecache.cache == before
