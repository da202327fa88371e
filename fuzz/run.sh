#!/usr/bin/env bash
# Runs every fuzz target of irw for SECONDS each, one after the other (they share the machine).
#
#   fuzz/run.sh SECONDS [TARGET...]      targets: ir_parse rules_load pipeline json_read (default: all)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). cargo-fuzz passes nightly-only rustc flags
# (`-Zsanitizer=...`, sancov passes); on a stable toolchain RUSTC_BOOTSTRAP=1 makes rustc accept
# them. The sanitizer defaults to `none` (irw is safe Rust; AddressSanitizer would halve the
# executions per second for nothing); FUZZ_SANITIZER=address turns it on.
#
# Seeds (rebuilt on every run into fuzz/seeds/, not committed):
# - IR targets: the Paddle fixtures (../shared/fixtures/paddle/*.ir, main+startup pairs joined
#   into one file, the auto-parallel ones in ../shared/fixtures/paddle-dist/, the zoo's models
#   in ../shared/fixtures/paddle-zoo/ and tests/data/paddle_clip/), programs from
#   `irw gen mlp` in several configurations, the bad-input corpus tests/bad/*.ir and the golden
#   inputs of tests/golden/grad_merge/ and tests/golden/dist/;
# - rule target: rules/*.rw, the rule files under tests/golden/ and those embedded in its .test
#   cases;
# - JSON target: Paddle's PIR JSON (../shared/fixtures/paddle-json/, the zoo's *.paddle.json)
#   and feed files (the zoo's, tests/data/), each up to 64 KiB.
# libFuzzer adds what it finds to fuzz/corpus/TARGET/ (kept between runs, not committed);
# crashes, timeouts and out-of-memory inputs go to fuzz/artifacts/TARGET/. Every finding is fixed
# and kept as a regression test (a golden case in tests/golden/bad/, tests/all/prop_*.rs or a
# unit test), not as an artifact.
#
# Limits per input: 10 s (-timeout), 2 GiB of memory (-rss_limit_mb), 64 KiB (-max_len).
# FUZZ_ARGS adds libFuzzer flags, e.g. FUZZ_ARGS="-fork=1 -ignore_crashes=1" to keep going past
# a known open finding and collect distinct ones.
# Exit code: 0 when no target found anything.
set -uo pipefail
cd "$(dirname "$0")"
secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(ir_parse rules_load pipeline json_read)
fi
export RUSTC_BOOTSTRAP=1
sanitizer=${FUZZ_SANITIZER:-none}
fixtures=../../shared/fixtures/paddle
[ -d "$fixtures" ] || fixtures=../shared/fixtures/paddle

# ---- seeds ----
rm -rf seeds
mkdir -p seeds/ir seeds/rules seeds/json
# seed DIR FILE...: copies each FILE of at most 64 KiB (-max_len) into DIR, named after its
# directory and itself.
seed() {
    local dir=$1 f
    shift
    for f in "$@"; do
        [ -f "$f" ] || continue
        [ "$(stat -c %s "$f")" -le 65536 ] || continue
        cp "$f" "$dir/$(basename "$(dirname "$f")")_$(basename "$f")"
    done
}
seed seeds/ir "$fixtures"/*.ir "$fixtures"-dist/*.ir "$fixtures"-zoo/*.ir \
    ../tests/data/paddle_clip/*.ir ../tests/bad/*.ir ../tests/golden/grad_merge/*.ir \
    ../tests/golden/dist/*.ir
for pair in before:startup_before before_adam:startup_before_adam after:startup_after \
    master_grad_before:master_grad_startup_before; do
    m=$fixtures/${pair%%:*}.ir s=$fixtures/${pair##*:}.ir
    if [ -f "$m" ] && [ -f "$s" ]; then
        { cat "$m"; printf 'startup '; cat "$s"; } >"seeds/ir/joined_${pair%%:*}.ir"
    fi
done
irw() { cargo run -q --manifest-path ../Cargo.toml --bin irw -- "$@"; }
for opt in sgd momentum adam adamw; do
    for dt in f32 bf16; do
        irw gen mlp --layers 2 --optimizer $opt --dtype $dt -o "seeds/ir/gen_${opt}_${dt}.ir" || exit 1
    done
done
irw gen mlp --layers 1 --allreduce -o seeds/ir/gen_allreduce.ir || exit 1
irw gen mlp --layers 1 --allreduce --dtype bf16 -o seeds/ir/gen_allreduce_bf16.ir || exit 1
irw gen mlp --layers 1 --no-roles -o seeds/ir/gen_noroles.ir || exit 1
irw gen mlp --layers 1 --optimizer adam --dist 2 -o seeds/ir/gen_dist2_adam.ir || exit 1
irw gen mlp --layers 1 --dist 2 --allreduce --collective all_reduce -o seeds/ir/gen_dist2_allreduce.ir || exit 1
find ../rules ../tests/golden -name '*.rw' -exec cp {} seeds/rules/ \;
# Rule files embedded in golden cases (`//--- NAME.rw` sections of a `.test`: the bad rule files).
for t in $(find ../tests/golden -name '*.test'); do
    awk -v out="seeds/rules/$(basename "$t" .test)_" '
        /^\/\/--- / { f = ($2 ~ /\.rw$/) ? out $2 : ""; next }
        f != "" { print > f }' "$t"
done
seed seeds/json "$fixtures"-json/*.json "$fixtures"-zoo/*.json $(find ../tests/data -name '*.json')

# ---- runs ----
status=0
summary=""
for t in "${targets[@]}"; do
    case $t in
        ir_parse | pipeline) seed=seeds/ir dict=dict/ir.dict ;;
        rules_load) seed=seeds/rules dict=dict/rules.dict ;;
        json_read) seed=seeds/json dict=dict/json.dict ;;
        *) echo "unknown target $t" >&2; exit 2 ;;
    esac
    mkdir -p "corpus/$t" "artifacts/$t"
    before=$(ls "artifacts/$t" | wc -l)
    echo "=== $t: $secs s (sanitizer $sanitizer) ==="
    start=$(date +%s)
    cargo fuzz run -s "$sanitizer" "$t" "corpus/$t" "$seed" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -dict="$dict" -print_final_stats=1 ${FUZZ_ARGS:-}
    rc=$?
    took=$(($(date +%s) - start))
    after=$(ls "artifacts/$t" | wc -l)
    line="$t: ran ${took} s, exit $rc, $((after - before)) new artifact(s), corpus $(ls "corpus/$t" | wc -l) inputs"
    echo "$line"
    summary+="$line"$'\n'
    if [ $rc -ne 0 ] || [ "$after" -ne "$before" ]; then status=1; fi
done
echo "=== summary ==="
printf '%s' "$summary"
exit $status
