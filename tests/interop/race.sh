#!/usr/bin/env bash
# irw's gradient-merged programs trained by Paddle 3.3.1's DEFAULT (multi-threaded)
# executor must never lose an update. For the Adam and the SGD fixture, irw writes the original
# and the merged program (rules/grad_merge.rw, k_steps=4) as Paddle JSON, and
# tests/interop/race.py trains one window N times, each in a fresh process (the race is a
# scheduling race: it shows in some runs only). Prints `wrong W/N` per program and exits 1 if any
# run of irw's output is wrong (or the harness fails).
#
#   tests/interop/race.sh [N]             # N runs per program, default 20
#
# Environment:
#   IRW_INTEROP_VENV  venv with paddlepaddle 3.3.1 (default target/interop-venv; created and
#                     installed from PyPI when absent, unless RACE_NO_INSTALL=1)
#   IRW               irw binary (default: `cargo build --release`, target/release/irw)
#   IRW_FIXTURES      fixtures directory (default ../shared/fixtures)
#   RACE_CONTROL=1    also train Paddle's own pass output (after*.ir) N times and print its
#                     count: it races (8-13 of 20 wrong measured), showing the harness sees it
#   PYTHON            interpreter that creates the venv (default python3)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${IRW_INTEROP_VENV:-$repo/target/interop-venv}"
fixtures="${IRW_FIXTURES:-$repo/../shared/fixtures}"
python="${PYTHON:-python3}"
n="${1:-20}"
fx="$fixtures/paddle"

if [ ! -f "$fx/before_adam.ir" ] || [ ! -f "$fx/adam.numerics.json" ]; then
    echo "race.sh: fixtures not found in $fixtures (set IRW_FIXTURES)" >&2
    exit 2
fi

# shellcheck source=tests/interop/venv.sh
. "$repo/tests/interop/venv.sh"
ensure_paddle_venv race.sh RACE_NO_INSTALL

if [ -z "${IRW:-}" ]; then
    echo "== cargo build --release"
    (cd "$repo" && cargo build --quiet --release --bin irw)
    IRW="${CARGO_TARGET_DIR:-$repo/target}/release/irw"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# runs NAME BEFORE_MAIN BEFORE_START AFTER_MAIN AFTER_START FEED: N runs, prints the count,
# returns 1 when a run was wrong or failed.
runs() {
    local name=$1 wrong=0 errors=0 rc
    shift
    for i in $(seq 1 "$n"); do
        rc=0
        timeout 120 "$venv/bin/python" "$repo/tests/interop/race.py" "$@" >"$work/out" 2>&1 || rc=$?
        if [ "$rc" -eq 1 ]; then
            wrong=$((wrong + 1))
            echo "   run $i wrong: $(grep '^merged vs' "$work/out" | tail -1)"
        elif [ "$rc" -ne 0 ]; then
            errors=$((errors + 1))
            echo "   run $i failed (exit $rc):"
            grep -v -e '^W[0-9]\{4\} ' -e '^I[0-9]\{4\} ' "$work/out" | tail -5 | sed 's/^/     /'
        fi
    done
    echo "race: $name: wrong $wrong/$n, harness errors $errors"
    [ "$wrong" -eq 0 ] && [ "$errors" -eq 0 ]
}

status=0
for prog in adam sgd; do
    if [ "$prog" = adam ]; then sfx=_adam; else sfx=; fi
    s=(--startup "$fx/startup_before$sfx.ir" "$fx/before$sfx.ir")
    "$IRW" "${s[@]}" --emit paddle-json -o "$work/$prog.bm.json" --startup-out "$work/$prog.bs.json"
    "$IRW" --rules "$repo/rules/grad_merge.rw" --set k_steps=4 "${s[@]}" \
        --emit paddle-json -o "$work/$prog.am.json" --startup-out "$work/$prog.as.json"
    runs "$prog: irw grad_merge.rw, default executor" "$work/$prog.bm.json" "$work/$prog.bs.json" \
        "$work/$prog.am.json" "$work/$prog.as.json" 4 "$fx/$prog.numerics.json" || status=1
    if [ "${RACE_CONTROL:-0}" = 1 ]; then
        "$IRW" --startup "$fx/startup_after$sfx.ir" "$fx/after$sfx.ir" \
            --emit paddle-json -o "$work/$prog.pm.json" --startup-out "$work/$prog.ps.json"
        runs "$prog: Paddle's own pass output (control, expected to race)" \
            "$work/$prog.bm.json" "$work/$prog.bs.json" "$work/$prog.pm.json" "$work/$prog.ps.json" \
            4 "$fx/$prog.numerics.json" || true
    fi
done
exit "$status"
