#!/usr/bin/env bash
# Every test that needs Paddle: the interop scripts (paddle.sh, dp2.sh, zoo.sh, race.sh), the Python
# package's tests (pytest python/tests) and examples/paddle_train.py (exit 1 when the merged
# training's losses leave 1e-5 of full-batch training's). CI runs it after `cargo test --release` (.ci/run).
#
#   tests/interop/run_all.sh
#
# It creates the venv (default target/interop-venv, reused when it already holds
# paddlepaddle 3.3.1), installs paddlepaddle==3.3.1, numpy, pytest and maturin from PyPI into it,
# builds irw and installs the Python package (`pip install ./python`), then runs the tests. A venv
# that cannot be made or a package that cannot be installed (no network, say) is a failure, never
# a skip.
#
# Environment: IRW_INTEROP_VENV (venv directory), PYTHON (interpreter that creates the venv,
# default python3), RACE_RUNS (runs per program of race.sh, default 3), ZOO_RUNS (default-executor
# runs per paddle-zoo model of zoo.sh, default 2), IRW_FIXTURES (default
# ../shared/fixtures), CARGO_TARGET_DIR (as for cargo).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
venv="${IRW_INTEROP_VENV:-$target/interop-venv}"
python="${PYTHON:-python3}"
export IRW_INTEROP_VENV="$venv"
export IRW_FIXTURES="${IRW_FIXTURES:-$repo/../shared/fixtures}"

step() { echo "== run_all: $* ($(date -u +%H:%M:%S))"; }

if [ ! -d "$IRW_FIXTURES/paddle" ] || [ ! -d "$IRW_FIXTURES/paddle-zoo" ]; then
    echo "run_all.sh: fixtures not found in $IRW_FIXTURES (set IRW_FIXTURES)" >&2
    exit 2
fi

if [ ! -x "$venv/bin/python" ]; then
    step "creating venv $venv"
    "$python" -m venv "$venv"
fi
want='import sys, paddle, numpy, pytest; sys.exit(paddle.__version__ != "3.3.1")'
if ! "$venv/bin/python" -c "$want" 2>/dev/null || [ ! -x "$venv/bin/maturin" ]; then
    step "pip install paddlepaddle==3.3.1 numpy pytest maturin"
    "$venv/bin/pip" install --quiet "paddlepaddle==3.3.1" numpy pytest "maturin>=1.5,<2"
fi
"$venv/bin/python" -c "$want"

step "cargo build --release"
(cd "$repo" && cargo build --quiet --release --bin irw)
irw="$target/release/irw"

# The package's Rust builds into the same target directory, so irw's dependencies compiled for
# the build above are reused.
step "pip install ./python"
PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$target" "$venv/bin/pip" install --quiet --no-build-isolation "$repo/python"

step "tests/interop/paddle.sh"
IRW_BIN="$irw" bash "$repo/tests/interop/paddle.sh"
step "tests/interop/dp2.sh"
IRW_BIN="$irw" IRW_INTEROP_NO_INSTALL=1 bash "$repo/tests/interop/dp2.sh"
step "tests/interop/zoo.sh ${ZOO_RUNS:-2}"
IRW="$irw" ZOO_NO_INSTALL=1 bash "$repo/tests/interop/zoo.sh" "${ZOO_RUNS:-2}"
step "tests/interop/race.sh ${RACE_RUNS:-3}"
IRW="$irw" RACE_NO_INSTALL=1 bash "$repo/tests/interop/race.sh" "${RACE_RUNS:-3}"
step "pytest python/tests"
(cd "$repo" && "$venv/bin/python" -m pytest -q python/tests)
step "python examples/paddle_train.py"
(cd "$repo" && "$venv/bin/python" examples/paddle_train.py)
step "done"
