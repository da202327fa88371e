#!/usr/bin/env bash
# Paddle interop check: Paddle 3.3.1 saves its programs as PIR JSON, irw reads, rewrites and writes
# them, and Paddle loads and trains irw's output (see tests/interop/paddle_interop.py for the
# steps). CI runs it through tests/interop/run_all.sh; it downloads paddlepaddle (~200 MB) from
# PyPI into a venv that is reused.
#
#   tests/interop/paddle.sh            # venv in target/interop-venv (reused), work dir in a tmpdir
#
# Environment: IRW_INTEROP_VENV (venv directory), IRW_FIXTURES (default ../shared/fixtures),
# PYTHON (interpreter for the venv, default python3), IRW_BIN (the irw binary; default: cargo
# build, target/debug/irw), CARGO_TARGET_DIR (as for cargo).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${IRW_INTEROP_VENV:-$repo/target/interop-venv}"
fixtures="${IRW_FIXTURES:-$repo/../shared/fixtures}"
python="${PYTHON:-python3}"

if [ ! -d "$fixtures/paddle" ] || [ ! -d "$fixtures/paddle-json" ] || [ ! -d "$fixtures/paddle-dist" ]; then
    echo "paddle.sh: fixtures not found in $fixtures (set IRW_FIXTURES)" >&2
    exit 2
fi

if [ ! -x "$venv/bin/python" ]; then
    echo "== creating venv $venv"
    "$python" -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import paddle, sys; sys.exit(paddle.__version__ != "3.3.1")' 2>/dev/null; then
    echo "== pip install paddlepaddle==3.3.1"
    "$venv/bin/pip" install --quiet "paddlepaddle==3.3.1"
fi

if [ -n "${IRW_BIN:-}" ]; then
    irw="$IRW_BIN"
else
    echo "== cargo build"
    (cd "$repo" && cargo build --quiet --bin irw)
    irw="${CARGO_TARGET_DIR:-$repo/target}/debug/irw"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
"$venv/bin/python" "$repo/tests/interop/paddle_interop.py" \
    --irw "$irw" --repo "$repo" --fixtures "$fixtures" --work "$work" 2>&1 \
    | grep -v -e '^W[0-9]\{4\} ' -e 'warnings.warn' -e 'UserWarning' -e "^I[0-9]\{4\} "
rc="${PIPESTATUS[0]}"
# The paddle-zoo models (LeNet, a Transformer encoder layer, a clipped Adam MLP): Paddle trains
# irw's JSON of the original and of Paddle's own gradient-merge output to the fixtures' numbers.
echo "== paddle-zoo: irw's JSON trained by Paddle"
"$venv/bin/python" "$repo/tests/interop/zoo_json.py" "$irw" "$fixtures/paddle-zoo" "$work" 2>&1 \
    | grep -v -e '^W[0-9]\{4\} ' -e 'warnings.warn' -e 'UserWarning' -e "^I[0-9]\{4\} "
zoo="${PIPESTATUS[0]}"
# The recurrent programs (paddle.nn.LSTM, paddle.nn.GRU): Paddle trains irw's JSON of each and of
# its gradient merge to Paddle's own full-batch step.
echo "== rnn: irw's JSON of the LSTM and GRU programs trained by Paddle"
"$venv/bin/python" "$repo/tests/interop/rnn_json.py" "$irw" "$repo" "$work" 2>&1 \
    | grep -v -e '^W[0-9]\{4\} ' -e 'warnings.warn' -e 'UserWarning' -e "^I[0-9]\{4\} "
rnn="${PIPESTATUS[0]}"
[ "$rc" = 0 ] && [ "$zoo" = 0 ] && [ "$rnn" = 0 ]
