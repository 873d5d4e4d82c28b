#!/usr/bin/env bash
# Re-record constraints.txt, the one stack both installs use: install everything
# `scripts/install.sh --test` installs into a scratch venv without constraints, then
# freeze it (our own editable packages left out). Review the diff, run the tests, commit.
#
#   bash scripts/lock.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
VENV="$scratch/venv" CONSTRAINTS=none bash scripts/install.sh --test
{
    echo "# The recorded stack: every version scripts/install.sh installs, with or without --test."
    echo "# Made by \`bash scripts/lock.sh\` on $(date -u +%Y-%m-%d) with $("$scratch/venv/bin/python" -V)."
    # torch's local label (+cpu) dropped: the pin is torch==2.13.0, whichever wheel provides it.
    PYTHONWARNINGS=ignore "$scratch/venv/bin/python" -m pip freeze --exclude-editable 2>/dev/null \
        | grep -v '^#' | sed -E 's/^(torch==[0-9.]+)\+cpu$/\1/' | LC_ALL=C sort -f
} > constraints.txt.new
mv constraints.txt.new constraints.txt
echo "wrote constraints.txt ($(grep -vc '^#' constraints.txt) packages)"
