#!/usr/bin/env bash
# Paddle 3.3.1 trains irw's gradient merge of each paddle-zoo model (`--emit paddle-json`,
# rules/grad_merge.rw, k_steps=4) the Engine way and must reach Paddle's own full-batch step of
# the original (`state_after_full_batch_step`: parameters and optimizer state), and so must its
# merge of the loss-scaled MLP of tests/exec_fixtures/amp (parameters, scale, counters); once with the
# sequential executor and N times (default 10) with the default multi-threaded one; `irw lint`
# must be clean on each output. Each model is rewritten from Paddle's text dump (M_before.ir) and
# from Paddle's own JSON of it (M_before.paddle.json, whose attribute tags irw keeps). Then
# rules/examples/global_norm_clip.rw, alone and after the merge, must take the step of Paddle's own
# ClipGradByGlobalNorm (tests/data/paddle_clip); the clipped model merged with avg=false must
# train in Paddle as irw's executor runs it; and the token-mean language models of
# tests/data/paddle_tokens merged with normalize=tokens must reach Paddle's full-batch step. tests/interop/zoo.py is the training harness. Prints per model
# the worst tensor, the lint result and `wrong W/N`; exits 1 if anything is wrong.
#
#   tests/interop/zoo.sh [N]
#
# Environment:
#   IRW_INTEROP_VENV  venv with paddlepaddle 3.3.1 (default target/interop-venv; created and
#                     installed from PyPI when absent, unless ZOO_NO_INSTALL=1)
#   IRW               irw binary (default: `cargo build --release`, target/release/irw)
#   IRW_FIXTURES      fixtures directory (default ../shared/fixtures)
#   ZOO_CONTROL=1     also train Paddle's own pass output (M_after.ir, written as JSON by irw)
#                     once, sequentially: it is wrong on mlp_clip_adam and lenet_momentum
#   PYTHON            interpreter that creates the venv (default python3)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${IRW_INTEROP_VENV:-$repo/target/interop-venv}"
fixtures="${IRW_FIXTURES:-$repo/../shared/fixtures}"
python="${PYTHON:-python3}"
n="${1:-10}"
zoo="$fixtures/paddle-zoo"
models=(mlp_clip_adam lenet_momentum transformer_adamw)

if [ ! -f "$zoo/README.md" ]; then
    echo "zoo.sh: fixtures not found in $fixtures (set IRW_FIXTURES)" >&2
    exit 2
fi

# shellcheck source=tests/interop/venv.sh
. "$repo/tests/interop/venv.sh"
ensure_paddle_venv zoo.sh ZOO_NO_INSTALL

if [ -z "${IRW:-}" ]; then
    echo "== cargo build --release"
    (cd "$repo" && cargo build --quiet --release --bin irw)
    IRW="${CARGO_TARGET_DIR:-$repo/target}/release/irw"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# train LABEL SEQUENTIAL MAIN START FEED NUMERICS K: one run; prints the harness's summary line
# (and the tensors when wrong); returns its exit code.
train() {
    local label=$1 seq=$2 main=$3 start=$4 feed=$5 num=$6 k=$7 rc=0
    FLAGS_new_executor_sequential_run=$seq timeout 300 "$venv/bin/python" "$repo/tests/interop/zoo.py" \
        "$main" "$start" "$feed" "$num" "$k" >"$work/out" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then
        echo "   $label: $(grep '^zoo:' "$work/out")"
    else
        echo "   $label: exit $rc"
        grep -e '^  ' -e '^zoo' -e 'Error' "$work/out" | sed 's/^/     /' | tail -30
    fi
    return "$rc"
}

# train_all LABEL MAIN START FEED NUMERICS K: one run with the sequential executor, then N with
# the default one (the first wrong run's output shown); prints `wrong W/N`; returns 1 when any
# run is wrong.
train_all() {
    local label=$1 rc=0 wrong=0 i
    shift
    train "$label, sequential executor" 1 "$@" || rc=1
    for i in $(seq 1 "$n"); do
        if ! train "$label, default executor, run $i" 0 "$@" >"$work/run"; then
            wrong=$((wrong + 1))
            [ "$wrong" -gt 1 ] || cat "$work/run"
        fi
    done
    echo "   $label, default executor: wrong $wrong/$n"
    [ "$wrong" -eq 0 ] || rc=1
    return "$rc"
}

# lint LABEL FILE: `irw lint` on FILE; prints whether it is clean (the hazards when not);
# returns 1 when it is not.
lint() {
    if "$IRW" lint "$2" >"$work/lint" 2>&1; then
        echo "   $1: clean"
    else
        echo "   $1: hazards"; sed 's/^/     /' "$work/lint" | head -20
        return 1
    fi
}

status=0
for m in "${models[@]}"; do
    echo "== $m"
    s=(--startup "$zoo/${m}_startup_before.ir" "$zoo/${m}_before.ir")
    "$IRW" --rules "$repo/rules/grad_merge.rw" --set k_steps=4 "${s[@]}" -o "$work/$m.gm.ir"
    lint "irw lint" "$work/$m.gm.ir" || status=1
    # Two inputs: Paddle's text dump, and Paddle's own JSON of the same program (whose attribute
    # tags irw keeps). Both are written as JSON and trained.
    for from in text json; do
        if [ "$from" = text ]; then
            in=("${s[@]}")
        else
            in=(--startup "$zoo/${m}_startup_before.paddle.json" "$zoo/${m}_before.paddle.json")
        fi
        "$IRW" --rules "$repo/rules/grad_merge.rw" --set k_steps=4 "${in[@]}" \
            --emit paddle-json -o "$work/$m.am.json" --startup-out "$work/$m.as.json"
        train_all "irw from $from" "$work/$m.am.json" "$work/$m.as.json" \
            "$zoo/$m.feed.json" "$zoo/$m.numerics.json" 4 || status=1
    done
    if [ "${ZOO_CONTROL:-0}" = 1 ]; then
        "$IRW" --startup "$zoo/${m}_startup_after.ir" "$zoo/${m}_after.ir" \
            --emit paddle-json -o "$work/$m.pm.json" --startup-out "$work/$m.ps.json"
        train "Paddle's own pass (control), sequential executor" 1 \
            "$work/$m.pm.json" "$work/$m.ps.json" "$zoo/$m.feed.json" "$zoo/$m.numerics.json" 4 \
            || true
    fi
done

# avg=false on the clipped model: the clip's ops read each buffer directly, and each buffer is
# zeroed itself. Paddle must train irw's JSON of it as irw's executor runs the same program
# (`irw run --dump`, the reference; `irw check` proves that program is the full-batch step of the
# loss summed over the micro-batches: tests/golden/check/zoo_clip_adam_avg_false.test).
m=mlp_clip_adam
echo "== $m, avg=false"
"$IRW" --rules "$repo/rules/grad_merge.rw" --set k_steps=4 --set avg=false \
    --startup "$zoo/${m}_startup_before.ir" "$zoo/${m}_before.ir" \
    -o "$work/af.ir" --startup-out "$work/af_s.ir"
lint "irw lint" "$work/af.ir" || status=1
"$IRW" run "$work/af.ir" --startup "$work/af_s.ir" --k-steps 4 --feed "$zoo/$m.feed.json" \
    --dump "$work/af.dump.json" >/dev/null
"$venv/bin/python" - "$work/af.dump.json" "$work/af.num.json" <<'PY'
import json, sys
state = json.load(open(sys.argv[1]))["state"]
names = [n for n in state if not n.endswith("@GRAD@MERGE")]
json.dump({"state_after_full_batch_step": state, "compare_params": names, "compare_state": []},
          open(sys.argv[2], "w"))
PY
"$IRW" "$work/af.ir" --startup "$work/af_s.ir" \
    --emit paddle-json -o "$work/af.m.json" --startup-out "$work/af.s.json"
train_all "irw avg=false" "$work/af.m.json" "$work/af.s.json" "$zoo/$m.feed.json" \
    "$work/af.num.json" 4 || status=1

# Dynamic loss scaling (tests/exec_fixtures/amp, a program Paddle built): the merged window must
# reach Paddle's full-batch step, parameters, the scale and its counters.
amp="$repo/tests/exec_fixtures/amp"
echo "== mlp_loss_scaling"
"$IRW" --rules "$repo/rules/grad_merge.rw" --set k_steps=4 "$amp/mlp_loss_scaling.ir" \
    -o "$work/amp.gm.ir"
lint "irw lint" "$work/amp.gm.ir" || status=1
"$IRW" --rules "$repo/rules/grad_merge.rw" --set k_steps=4 "$amp/mlp_loss_scaling.ir" \
    --emit paddle-json -o "$work/amp.am.json" --startup-out "$work/amp.as.json"
train_all "irw" "$work/amp.am.json" "$work/amp.as.json" "$amp/mlp_loss_scaling.step0.json" \
    "$amp/mlp_loss_scaling.numerics.json" 4 || status=1

# Global-norm clipping (rules/examples/global_norm_clip.rw, clip_norm 0.1) of an Adam MLP that
# Paddle built without a clip (tests/data/paddle_clip): alone, and after gradient merge (k=4,
# trained the Engine way), Paddle must take the step of its own ClipGradByGlobalNorm(0.1) on
# the full batch (numerics.json, made by tests/data/paddle_global_norm_clip.py).
clip="$repo/tests/data/paddle_clip"
clip_in=(--startup "$clip/mlp_adam_startup_before.ir" "$clip/mlp_adam_before.ir")
clip_feed="$zoo/mlp_clip_adam.feed.json"
echo "== mlp_adam, global-norm clip"
"$IRW" --rules "$repo/rules/examples/global_norm_clip.rw" --set clip_norm=0.1 "${clip_in[@]}" \
    --emit paddle-json -o "$work/clip.m.json" --startup-out "$work/clip.s.json"
train "irw clip, sequential executor" 1 "$work/clip.m.json" "$work/clip.s.json" \
    "$clip_feed" "$clip/numerics.json" 1 || status=1
clip_rules=(--rules "$repo/rules/grad_merge.rw" --rules "$repo/rules/examples/global_norm_clip.rw"
    --set k_steps=4 --set clip_norm=0.1)
"$IRW" "${clip_rules[@]}" "${clip_in[@]}" -o "$work/clip.gm.ir"
lint "irw lint (merge, then clip)" "$work/clip.gm.ir" || status=1
"$IRW" "${clip_rules[@]}" "${clip_in[@]}" \
    --emit paddle-json -o "$work/clip.am.json" --startup-out "$work/clip.as.json"
train_all "irw merge, then clip" "$work/clip.am.json" "$work/clip.as.json" "$clip_feed" \
    "$clip/numerics.json" 4 || status=1
# Token-mean losses, over a fed mask and Paddle's cross_entropy(ignore_index) mean
# (tests/data/paddle_tokens, made by tests/data/paddle_token_mean.py): merged with
# normalize=tokens from Paddle's JSON, the window must reach Paddle's full-batch step, the
# buffers and the token count back at zero (the 0-d count is refilled by `full_`: Paddle's
# set_value kernels take ranks 1 to 6).
tokens="$repo/tests/data/paddle_tokens"
for m in tied_lm_adam gru_tokmean_adam gru_ignore_index_sgd; do
    echo "== $m, normalize=tokens"
    "$IRW" --rules "$repo/rules/grad_merge.rw" --set k_steps=4 --set normalize=tokens \
        --startup "$tokens/${m}_startup.json" "$tokens/$m.json" -o "$work/tok.ir"
    lint "irw lint" "$work/tok.ir" || status=1
    "$IRW" --rules "$repo/rules/grad_merge.rw" --set k_steps=4 --set normalize=tokens \
        --startup "$tokens/${m}_startup.json" "$tokens/$m.json" \
        --emit paddle-json -o "$work/tok.m.json" --startup-out "$work/tok.s.json"
    train_all "irw" "$work/tok.m.json" "$work/tok.s.json" "$tokens/$m.feed.json" \
        "$tokens/$m.numerics.json" 4 || status=1
done
exit "$status"
