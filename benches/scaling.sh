#!/usr/bin/env bash
# End-to-end scaling of the release binary on generated MLP programs of about 10^3..10^6 ops:
# parse + verify + print without rules, parse + grad_merge + print, and parse + global-norm
# clipping (rules/examples/global_norm_clip.rw, a sum over every optimizer) + print.
# Prints a table: ops, bytes, seconds, ops/s, peak RSS (from /usr/bin/time -v).
#
#   benches/scaling.sh            # all sizes
#   SIZES="60 600" benches/scaling.sh
#   IRW=/tmp/irw-before benches/scaling.sh   # another binary (before/after a change); no build
#
# Canonicalization (rules/canonicalize.rw, the e-graph) runs on sizes up to CANON_MAX layers
# (default 6000, about 10^5 ops). The last line gives time(largest)/time(next) for grad_merge.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z ${IRW:-} ]]; then
  cargo build --release --quiet
  IRW=target/release/irw
fi
TIME=/usr/bin/time
[[ -x $TIME ]] || { echo "needs /usr/bin/time (apt-get install time)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SIZES=${SIZES:-"60 600 6000 60000"}
CANON_MAX=${CANON_MAX:-6000}
gm_times=()

run() { # label, args...
  local label=$1; shift
  local best="" rss=""
  for _ in 1 2 3; do
    $TIME -f "%e %M" -o "$tmp/t" "$IRW" "$@" -o "$tmp/out.ir"
    read -r s kb < "$tmp/t"
    if [[ -z $best ]] || awk "BEGIN{exit !($s < $best)}"; then best=$s; rss=$kb; fi
  done
  echo "$best $rss"
}

printf "%-14s %9s %11s %8s %11s %9s\n" task ops bytes seconds ops/s "RSS MiB"
for layers in $SIZES; do
  f="$tmp/mlp$layers.ir"
  $IRW gen mlp --layers "$layers" -o "$f"
  bytes=$(stat -c %s "$f")
  ops=$($IRW --stats "$f" 2>&1 >/dev/null | sed -n 's/^irw: \([0-9]*\) ops.*/\1/p')
  read -r s kb < <(run roundtrip "$f")
  printf "%-14s %9d %11d %8.3f %11.0f %9.0f\n" roundtrip "$ops" "$bytes" "$s" "$(awk "BEGIN{print $ops/($s>0?$s:0.001)}")" "$(awk "BEGIN{print $kb/1024}")"
  if [[ -f rules/grad_merge.rw ]]; then
    read -r s kb < <(run grad_merge --rules rules/grad_merge.rw --set k_steps=4 "$f")
    printf "%-14s %9d %11d %8.3f %11.0f %9.0f\n" grad_merge "$ops" "$bytes" "$s" "$(awk "BEGIN{print $ops/($s>0?$s:0.001)}")" "$(awk "BEGIN{print $kb/1024}")"
    gm_times+=("$ops:$s")
  fi
  if [[ -f rules/examples/global_norm_clip.rw ]]; then
    # A fold over every optimizer (2 per layer): linear through its end marker.
    read -r s kb < <(run global_norm --rules rules/examples/global_norm_clip.rw --set clip_norm=1.0 "$f")
    printf "%-14s %9d %11d %8.3f %11.0f %9.0f\n" global_norm "$ops" "$bytes" "$s" "$(awk "BEGIN{print $ops/($s>0?$s:0.001)}")" "$(awk "BEGIN{print $kb/1024}")"
  fi
  if [[ -f rules/canonicalize.rw ]] && (( layers <= CANON_MAX )); then
    read -r s kb < <(run canonicalize --rules rules/canonicalize.rw "$f")
    printf "%-14s %9d %11d %8.3f %11.0f %9.0f\n" canonicalize "$ops" "$bytes" "$s" "$(awk "BEGIN{print $ops/($s>0?$s:0.001)}")" "$(awk "BEGIN{print $kb/1024}")"
  fi
done
n=${#gm_times[@]}
if (( n >= 2 )); then
  IFS=: read -r o1 t1 <<<"${gm_times[n-2]}"
  IFS=: read -r o2 t2 <<<"${gm_times[n-1]}"
  echo "grad_merge growth: time($o2 ops) / time($o1 ops) = $(awk "BEGIN{printf \"%.1f\", $t2/($t1>0?$t1:0.001)}") for $(awk "BEGIN{printf \"%.1f\", $o2/$o1}")x the ops"
fi
