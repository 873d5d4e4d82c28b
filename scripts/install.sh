#!/usr/bin/env bash
# Create .venv (or $VENV) and install verl-rewards, every first-party plugin and
# the demo's plugin, all editable (linked to this checkout: edit a plugin, run
# again, no reinstall). torch is pinned first: an unpinned torch would pull a
# multi-GB CUDA build.
#
#   bash scripts/install.sh            # the demo and development
#   bash scripts/install.sh --test     # also the test tools, the peer trainers
#                                      # (verl, TRL) and the test-only plugins
#   bash scripts/install.sh --dry-run  # print the pip commands, install nothing
#
# Both installs take every version from constraints.txt (the one recorded stack:
# the demo runs what the tests test); `bash scripts/lock.sh` re-records it.
# CONSTRAINTS=none installs unconstrained (lock.sh does that).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
TEST=0
DRY=0
CONSTRAINTS=${CONSTRAINTS:-constraints.txt}
for arg in "$@"; do
    case "$arg" in
        --test) TEST=1 ;;
        --dry-run) DRY=1 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option $arg (use --test, --dry-run)" >&2; exit 2 ;;
    esac
done

pin=()
[ "$CONSTRAINTS" = none ] || pin=(-c "$CONSTRAINTS")
pip() {
    # PYTHONWARNINGS: setuptools' editable-install banner, printed once per package, says nothing
    # that applies here.
    if [ "$DRY" = 1 ]; then echo "pip $*"; else PYTHONWARNINGS=ignore "$VENV/bin/python" -m pip "$@"; fi
}

if [ "$DRY" = 0 ]; then
    [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
fi

extras="trainer,dev,serve"
dirs=(plugins/*/ examples/toy_plugin/)
if [ "$TEST" = 1 ]; then
    extras="trainer,dev,serve,test,peers"
    # flawed rewards that `verl-rewards audit` must catch; plugins with every shape and fault
    dirs+=(tests/fixtures/audit_targets/ tests/fixtures/testkit/)  # for the tests only
fi
editable=(-e ".[$extras]")
for dir in "${dirs[@]}"; do
    [ -f "$dir/pyproject.toml" ] && editable+=(-e "./${dir%/}")
done

pip install --quiet --upgrade pip setuptools wheel
pip install --quiet "torch==2.13.0" "${pin[@]}"
pip install --quiet "${editable[@]}" "torch==2.13.0" "${pin[@]}"  # the pin again: no peer may move torch
if [ "$TEST" = 1 ]; then
    # OpenRLHF's reward-file loader and argument parser (the tests run them); its
    # GPU stack (vLLM, DeepSpeed, flash-attn) is not needed for that.
    pip install --quiet --no-deps "openrlhf==0.11.2" "${pin[@]}"
    pip install --quiet pylatexenc "${pin[@]}"
fi
[ "$DRY" = 1 ] || echo "installed into $VENV (editable): verl-rewards + $(( ${#editable[@]} / 2 - 1 )) plugin package(s)$([ "$TEST" = 1 ] && echo ', with the test tools and test plugins')"
