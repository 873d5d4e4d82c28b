#!/usr/bin/env bash
# Create .venv (or $VENV) and install verl-rewards, every first-party plugin and
# the demo's plugin, all editable (linked to this checkout: edit a plugin, run
# again, no reinstall). torch is pinned first: an unpinned torch would pull a
# multi-GB CUDA build.
#
#   bash scripts/install.sh            # the demo and development
#   bash scripts/install.sh --test     # also the test tools, the peer trainers
#                                      # (verl, TRL, OpenRLHF, verifiers, SkyRL,
#                                      # AReaL) and the test-only plugins
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
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option $arg (use --test, --dry-run)" >&2; exit 2 ;;
    esac
done

pin=()
[ "$CONSTRAINTS" = none ] || pin=(-c "$CONSTRAINTS")
# OpenRLHF, verifiers and AReaL go in without some of their dependencies (below): pip's
# complaints about that go to $PEER_LOG, and one line at the end says so.
PARTIAL_PEERS="openrlhf verifiers areal openreward"
PEER_LOG="$VENV/pip-peers.log"
# shellcheck source=scripts/_pip.sh
source scripts/_pip.sh
pip() { pip_run "$@"; }

if [ "$DRY" = 0 ]; then
    [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
    : > "$PEER_LOG"
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

pip install --quiet --upgrade pip "setuptools>=77" wheel  # setuptools: every package here builds with it
pip install --quiet "torch==2.13.0" "${pin[@]}"
# Every package here builds with setuptools>=77 (installed just above): building them in
# this environment saves pip an isolated build environment per package.
pip install --quiet --no-build-isolation "${editable[@]}" "torch==2.13.0" "${pin[@]}"  # the pin again: no peer may move torch
if [ "$TEST" = 1 ]; then
    # Three peers go in without their dependencies, then only the dependencies the tests need:
    # * OpenRLHF 0.11.2: its reward-file loader and argument parser (the tests run them);
    #   its GPU stack (vLLM, DeepSpeed, flash-attn) is not needed for that;
    # * verifiers 0.4.0 pins openai<3, which verl-rewards-models (openai>=3) cannot share:
    #   all its dependencies but openai (the task and reward API the tests run does not
    #   call openai; it imports fine with openai 3);
    # * AReaL 1.0.4 pins torch<2.11 and transformers<=5.3 and pulls a GPU and agent stack:
    #   only what `import areal` and its AsyncRewardWrapper (areal.api.reward_api) import.
    # * openreward 0.1.167 (serve --tasks, the ors extra) pins sse-starlette==2.3.6, which
    #   verifiers' mcp 2.0.0 (sse-starlette>=3) cannot share: its other dependencies below.
    pip install --quiet --no-deps "openreward==0.1.167" "${pin[@]}"
    pip install --quiet --no-deps "openrlhf==0.11.2" "verifiers==0.4.0" "areal==1.0.4" "${pin[@]}"
    pip install --quiet pylatexenc \
        "aiohttp>=3.14.1" "anthropic>=1.0.0" "gepa>=0.0.6" "h11>=0.16.0" \
        "httpx2>=2.12.0" "httpx>=0.27.0" "loguru>=0.7.0" "math-verify>=0.8.0" "mcp==2.0.0" \
        "msgpack>=1.1.2" "numpy>=2.1.0" "prime-pydantic-config[toml]>=0.4.3" "prime-runs>=0.1.4" \
        "prime-sandboxes>=0.4.2" "prime-tunnel>=0.1.14" "pydantic>=2.12.3" "pyzmq>=27.1.0" \
        "renderers[multimodal]>=0.1.12" "rich>=11.0.0" "tenacity>=8.5.0" "tomli-w>=1.0.0" \
        "typing-extensions>=4.12.2" "uvicorn>=0.52.0" "openai>=3,<4" \
        colorlog flask lark uvloop numba einops \
        fastapi structlog google-genai opentelemetry-exporter-otlp-proto-grpc "torch==2.13.0" "${pin[@]}"
fi
[ "$DRY" = 1 ] || pip_peer_note "the tests run their reward loaders and APIs, not their GPU and agent stacks; verifiers' openai<3 pin would break verl-rewards-models; openreward's sse-starlette==2.3.6 pin would break verifiers' mcp"
[ "$DRY" = 1 ] || echo "installed into $VENV (editable): verl-rewards + $(( ${#editable[@]} / 2 - 1 )) plugin package(s)$([ "$TEST" = 1 ] && echo ', with the test tools and test plugins')"
