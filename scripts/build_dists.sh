#!/usr/bin/env bash
# Build an sdist and a wheel of every distribution in this repository, then `twine check`
# them: verl-rewards (the root), each plugins/*/ and examples/toy_plugin/ (the test-only
# plugins under tests/fixtures/ are not distributed). Each wheel is built from its sdist
# (python -m build's default), so a file the sdist leaves out is missing from the wheel.
#
#   bash scripts/build_dists.sh                 # isolated builds (setuptools from the index) into dist/
#   bash scripts/build_dists.sh --no-isolation  # with this venv's setuptools, unchecked: offline (the tests)
#   bash scripts/build_dists.sh --outdir DIR    # somewhere else than dist/
#
# Then install the files by name (verl-rewards is on no index; naming the files keeps pip
# from taking a package of that name from one):
#   pip install dist/verl_rewards-*.whl dist/verl_rewards_math-*.whl
# Needs the dev (or test) extra: build and twine. JOBS=N builds N at a time (default 2).
set -euo pipefail
here=$PWD  # a relative --outdir or PYTHON path is the caller's, not the checkout's
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
case "$PYTHON" in /*|.venv/bin/python) ;; */*) PYTHON=$here/$PYTHON ;; esac
JOBS=${JOBS:-2}
case "$JOBS" in ''|*[!0-9]*|0) echo "build_dists.sh: JOBS must be a whole number from 1, not '$JOBS'" >&2; exit 2 ;; esac
OUT=dist
isolation=()
while [ $# -gt 0 ]; do
    case "$1" in
        --no-isolation) isolation=(--no-isolation --skip-dependency-check) ;;
        --outdir) OUT=${2:?--outdir needs a directory}; case "$OUT" in /*) ;; *) OUT=$here/$OUT ;; esac; shift ;;
        -h|--help) sed -n '2,14p' "$0" | cut -c3-; exit 0 ;;
        *) echo "build_dists.sh: unknown option $1 (use --no-isolation, --outdir DIR)" >&2; exit 2 ;;
    esac
    shift
done
if ! "$PYTHON" -c 'import build, twine' 2>/dev/null; then
    echo "build_dists.sh: $PYTHON has no build or twine: install the dev extra" \
         "(bash scripts/install.sh does) or set PYTHON" >&2
    exit 2
fi

dirs=(.)
for dir in plugins/*/ examples/toy_plugin/; do
    [ -f "$dir/pyproject.toml" ] && dirs+=("${dir%/}")
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# Each build writes to its own directory; all move into $OUT once every build has
# succeeded (a failed run leaves $OUT as it was).
build_one() {
    local dir=$1 staging
    staging="$logs/$(echo "$dir" | tr '/.' '__')"
    if PYTHONWARNINGS=ignore "$PYTHON" -m build "${isolation[@]}" --outdir "$staging" "$dir" \
            > "$staging.log" 2>&1; then
        echo "built $(cd "$staging" && echo *)"
    else
        echo "build_dists.sh: building $dir failed:" >&2
        cat "$staging.log" >&2
        return 1
    fi
}

failed=0
pids=()
for dir in "${dirs[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 0.2; done
    build_one "$dir" &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || exit 1

# Earlier files of these distributions (any version) go first: pip --find-links takes
# the highest version it finds, stale or not.
built=()
for staging in "$logs"/*/; do
    for file in "$staging"*; do
        name=$(basename "$file")
        rm -f "$OUT/${name%%-*}"-*.whl "$OUT/${name%%-*}"-*.tar.gz
    done
done
for file in "$logs"/*/*; do
    mv "$file" "$OUT/"
    built+=("$OUT/$(basename "$file")")
done
"$PYTHON" -m twine check --strict "${built[@]}"
echo "built ${#built[@]} files of ${#dirs[@]} distributions into $OUT"
