#!/usr/bin/env bash
# Create .venv (or $VENV) and install verl-rewards with every first-party
# plugin, the example plugin and the test plugins. torch is pinned first:
# an unpinned torch would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip "$@"; }

pip install --quiet --upgrade pip setuptools wheel
pip install --quiet "torch==2.13.0"
plugins=()
for dir in plugins/*/ examples/toy_plugin/ tests/fixtures/testkit/; do
    [ -f "$dir/pyproject.toml" ] && plugins+=("./$dir")
done
pip install --quiet -e ".[trainer,test,dev,peers]" "${plugins[@]}" "torch==2.13.0"
# OpenRLHF's reward-file loader and argument parser (the tests run them); its
# GPU stack (vLLM, DeepSpeed, flash-attn) is not needed for that.
pip install --quiet --no-deps "openrlhf==0.11.2"
pip install --quiet pylatexenc
echo "installed into $VENV: verl-rewards + ${#plugins[@]} plugin package(s)"
