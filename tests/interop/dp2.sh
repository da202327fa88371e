#!/usr/bin/env bash
# Data parallelism on 2 real processes: Paddle 3.3.1 (CPU, gloo, loopback only) trains
# the programs irw writes -- the original data-parallel program, its gradient merge, and its
# gradient merge with the all-reduce hoisted -- and they must end where 1 process on the full
# batch ends (<= 1e-6), with the hoisted program running one all-reduce per parameter per k
# micro-steps. See tests/interop/README.md and tests/interop/dp2.py for the steps and checks.
#
#   tests/interop/dp2.sh            # venv in target/interop-venv (created and reused), ~2 min
#   tests/interop/dp2.sh --quick    # SGD, k=2 only
#
# Environment: IRW_INTEROP_VENV (venv directory; created with paddlepaddle==3.3.1 when it has no
# Paddle), IRW_INTEROP_NO_INSTALL=1 (never create or install: fail instead; cargo test sets it),
# IRW_BIN (the irw binary; default: cargo build --release, then target/release/irw),
# PYTHON (interpreter that creates the venv, default python3), CARGO_TARGET_DIR (as for cargo).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${IRW_INTEROP_VENV:-$repo/target/interop-venv}"
python="${PYTHON:-python3}"

# shellcheck source=tests/interop/venv.sh
. "$repo/tests/interop/venv.sh"
ensure_paddle_venv dp2.sh IRW_INTEROP_NO_INSTALL

if [ -n "${IRW_BIN:-}" ]; then
    irw="$IRW_BIN"
else
    echo "== cargo build --release"
    (cd "$repo" && cargo build --quiet --release --bin irw)
    irw="${CARGO_TARGET_DIR:-$repo/target}/release/irw"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" "$repo/tests/interop/dp2.py" --irw "$irw" --repo "$repo" --work "$work" "$@" 2>&1 \
    | grep -v -e '^W[0-9]\{4\} ' -e 'warnings.warn' -e 'UserWarning' -e '^I[0-9]\{4\} '
exit "${PIPESTATUS[0]}"
