"""Generate a reward plugin package: pyproject (entry point), module, test, README.

As generated it installs with pip, passes ``verl-rewards check`` and its own
tests pass. Templates are plain strings filled with :meth:`str.format`.
"""

from __future__ import annotations

import keyword
import re
import sys
from pathlib import Path
from typing import NamedTuple

from .errors import UsageError

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*$")
_MAX_NAME = 64


class Names(NamedTuple):
    """What one NAME becomes: the entry point, the distribution, the import package."""

    plugin: str  # entry-point name, as given: `reward.plugin=<plugin>`
    dist: str  # distribution name (dashes)
    package: str  # import package (underscores, lower case)


def names_for(name: str) -> Names:
    """Validate ``name`` and derive the package's names, or raise :class:`UsageError`."""
    if len(name) > _MAX_NAME or not _NAME.match(name):
        raise UsageError(
            f"invalid plugin name {name!r}: use letters, digits and single '-' or '_' between "
            f"them, starting with a letter (at most {_MAX_NAME} characters), e.g. my_reward"
        )
    package = name.replace("-", "_").lower()
    if keyword.iskeyword(package) or package in sys.stdlib_module_names:
        raise UsageError(f"invalid plugin name {name!r}: its package {package!r} would shadow "
                         f"Python's own {'keyword' if keyword.iskeyword(package) else 'module'}")
    names = Names(plugin=name, dist=package.replace("_", "-"), package=package)
    _refuse_installed(name, names)
    return names


def _refuse_installed(name: str, names: Names) -> None:
    """Refuse a name whose distribution or import package is already installed here:
    installing the new package would replace it (``new ray``, ``new verl_rewards``)."""
    import importlib.metadata
    import importlib.util

    try:
        dist = importlib.metadata.distribution(names.dist)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        raise UsageError(f"invalid plugin name {name!r}: distribution {dist.metadata['Name']} "
                         f"{dist.version} is installed here and installing the new package "
                         f"would replace it; choose another name, e.g. {names.package}_reward")
    try:
        spec = importlib.util.find_spec(names.package)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin not in (None, "namespace"):  # a directory is no clash
        raise UsageError(f"invalid plugin name {name!r}: module {names.package!r} is already "
                         f"importable here ({spec.origin}) and the new package would shadow it; "
                         f"choose another name, e.g. {names.package}_reward")


def taken_by(name: str) -> list[str]:
    """Display names of installed plugins already called ``name`` (no plugin is imported)."""
    from ..discovery import find_plugins

    return [r.display_name for r in find_plugins() if r.name == name]


def render(names: Names, requirement: str) -> dict[str, str]:
    """The package's files (relative path -> text)."""
    fields = {**names._asdict(), "requirement": requirement}
    return {
        "pyproject.toml": _PYPROJECT.format(**fields),
        "README.md": _README.format(**fields),
        f"src/{names.package}/__init__.py": _INIT.format(**fields),
        f"src/{names.package}/reward.py": _REWARD.format(**fields),
        f"tests/test_{names.package}.py": _TEST.format(**fields),
    }


def write(directory: Path, files: dict[str, str]) -> list[Path]:
    """Write ``files`` under ``directory``, which must not exist or be empty."""
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} exists and is not a directory")
    if directory.is_dir() and any(directory.iterdir()):
        raise UsageError(f"{directory} already exists and is not empty; choose another DIR")
    written = []
    for relative, text in files.items():
        path = directory / relative
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as e:
            raise UsageError(f"cannot write {path}: {e.strerror or e}") from e
        written.append(path)
    return written


_PYPROJECT = '''\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
description = "The {plugin} reward, a verl-rewards plugin"
readme = "README.md"
requires-python = ">=3.10"
dependencies = ["{requirement}"]

[project.optional-dependencies]
test = ["pytest>=7"]

# The plugin itself: `reward.plugin={plugin}` selects this function.
[project.entry-points.verl_rewards]
{plugin} = "{package}.reward:compute_score"

[tool.setuptools.packages.find]
where = ["src"]

# The package's own pytest settings: `python -m pytest tests` uses these wherever
# the package sits (inside another project's checkout too, whose settings would
# otherwise apply), and imports the package from src/. Only pytest's own options:
# nothing here needs a plugin the [test] extra does not install.
[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["src"]
'''

_INIT = '''\
"""The {plugin} reward plugin for verl-rewards."""

from .reward import compute_score

__all__ = ["compute_score"]
'''

_REWARD = '''\
"""The {plugin} reward.

verl calls it once per response with its sample signature. Return a number,
or a dict with a numeric "score" (other keys become per-sample extra info).
Keyword arguments come from the config: `reward.kwargs.ignore_case=true`.
"""

from __future__ import annotations

from typing import Any

from verl_rewards import Example, reward


@reward(
    description="1.0 when the response's last line equals the ground truth, else 0.0",
    examples=[
        # `verl-rewards check {plugin}` scores these and compares with `expected`.
        Example(solution_str="Let me think.\\n42", ground_truth="42", expected=1.0),
        Example(solution_str="Let me think.\\n41", ground_truth="42", expected=0.0),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    ignore_case: bool = False,
) -> dict[str, Any]:
    """Score the last line of ``solution_str`` against ``ground_truth``."""
    lines = solution_str.strip().splitlines()
    answer = lines[-1].strip() if lines else ""
    expected = str(ground_truth).strip()
    if ignore_case:
        answer, expected = answer.lower(), expected.lower()
    return {{"score": float(answer == expected), "answer": answer}}
'''

_TEST = '''\
"""Tests of the {plugin} reward. Run them with: python -m pytest tests"""

from {package}.reward import compute_score


def test_a_matching_last_line_scores_one():
    result = compute_score("my/dataset", "Let me think.\\n42", "42")
    assert result == {{"score": 1.0, "answer": "42"}}


def test_a_different_answer_scores_zero():
    assert compute_score("my/dataset", "Let me think.\\n41", "42")["score"] == 0.0


def test_ignore_case_comes_from_reward_kwargs():
    assert compute_score("my/dataset", "YES", "yes", ignore_case=True)["score"] == 1.0


def test_the_installed_plugin_passes_verl_rewards_check(verl_reward_check):
    # The fixture comes with verl-rewards: it imports the installed entry point,
    # validates its shape and runs its self-test examples, like `verl-rewards check`.
    verl_reward_check("{plugin}")
'''

_README = '''\
# {dist}

The `{plugin}` reward for LLM reinforcement learning, packaged as a
verl-rewards plugin: an entry point named `{plugin}` in group `verl_rewards`,
so every process (a Ray worker on any node, a process pool) imports it by its
real module name.

## Install and check

Run these in the environment that has verl-rewards (activate it first, e.g.
`source .venv/bin/activate`, or prefix each command with its `bin/` directory):

```bash
python -m pip install -e '.[test]' # on every node that scores; [test] adds pytest
verl-rewards show {plugin}
verl-rewards check {plugin}        # imports it and runs its self-test examples
python -m pytest tests
```

## Use

```bash
# in a trainer config, or on its command line
reward.plugin={plugin} reward.kwargs.ignore_case=true

# score a JSONL file of samples (data_source, solution_str, ground_truth)
verl-rewards score --input samples.jsonl --output scored.jsonl \\
    reward.plugin={plugin} reward.executor=local
```

```python
from verl_rewards import Scorer

with Scorer.from_config({{"plugin": "{plugin}", "executor": "local"}}) as scorer:
    result = scorer.score([{{"data_source": "my/dataset",
                            "solution_str": "Let me think.\\n42", "ground_truth": "42"}}])
print(result.scores)  # [1.0]
```

Edit `src/{package}/reward.py`; keep its `examples` honest, they are what
`verl-rewards check` runs. `tests/test_{package}.py` tests the example reward
as generated (the last line against the ground truth, `ignore_case`): when you
change what `reward.py` scores, change those tests with it, or they fail.
'''
