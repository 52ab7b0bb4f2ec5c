#!/usr/bin/env bash
# Whole processes against the floor: `little check --format json` on generated drafts of
# 1,000, 10,000 and 100,000 nodes (with a context and binding rows, so every layer runs)
# and on a bundled example, against `little-bench-floor` (the file read and skipped
# through by serde_json), the two run in alternation, in one run. Prints medians of wall
# time and CPU time, peak memory (/usr/bin/time), the ratios, and the machine's load.
#
#   scripts/bench-batch.sh [RUNS]        (default 15 runs of each program per size)
#   LITTLE_ARGS="--jobs 1" scripts/bench-batch.sh   extra arguments for `little check`
#   LITTLE_BIN=path/to/little                       another build of little (comparisons)
#   SKIP_BUILD=1                                    use the binaries in $CARGO_TARGET_DIR as they are
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-15}"
target="${CARGO_TARGET_DIR:-target}"
[[ -n "${SKIP_BUILD:-}" ]] || cargo build --release --quiet --bin little -p little -p little-conformance --bins
little="${LITTLE_BIN:-$target/release/little}"
floor="$target/release/little-bench-floor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sizes=(1000 10000 100000)
for n in "${sizes[@]}"; do "$target/release/little-bench-draft" "$n" "$work"; done
cp examples/quarterly-report.json "$work/example.json"

# One run of a command: wall ms (from the clock), CPU ms and peak RSS KB (from time).
measure() {
  local start end
  start=$(date +%s%N)
  /usr/bin/time -f "%U %S %M" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || {
    local rc=$?
    if [[ "$1" != "$little" || $rc -gt 1 ]]; then echo "failed ($rc): $*" >&2; cat "$work/stderr" >&2; exit 1; fi
  }
  end=$(date +%s%N)
  # The last line: a command that exits non-zero gets a line of its own first.
  read -r user sys rss < <(tail -1 "$work/time")
  awk -v w=$(((end - start) / 1000)) -v u="$user" -v s="$sys" -v r="$rss" \
    'BEGIN { printf "%.3f %.0f %d\n", w / 1000, (u + s) * 1000, r }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc); runs: $runs; little: $little ${LITTLE_ARGS:-}"
printf '%-9s %10s %10s %7s %10s %10s %11s %11s\n' draft "little ms" "floor ms" ratio "little cpu" "floor cpu" "little RSS" "floor RSS"
declare -A wall
for name in "${sizes[@]}" example; do
  file="$work/draft-$name.json"
  [[ $name == example ]] && file="$work/example.json"
  : >"$work/little.txt"
  : >"$work/floor.txt"
  for _ in $(seq "$runs"); do
    # shellcheck disable=SC2086
    measure "$little" check --format json --context "$work/context.json" --bindings "$work/bindings.json" \
      ${LITTLE_ARGS:-} "$file" >>"$work/little.txt"
    measure "$floor" "$file" >>"$work/floor.txt"
  done
  lw=$(cut -d' ' -f1 "$work/little.txt" | median)
  fw=$(cut -d' ' -f1 "$work/floor.txt" | median)
  lc=$(cut -d' ' -f2 "$work/little.txt" | median)
  fc=$(cut -d' ' -f2 "$work/floor.txt" | median)
  lr=$(cut -d' ' -f3 "$work/little.txt" | sort -g | tail -1)
  fr=$(cut -d' ' -f3 "$work/floor.txt" | sort -g | tail -1)
  wall[$name]=$lw
  awk -v n="$name" -v lw="$lw" -v fw="$fw" -v lc="$lc" -v fc="$fc" -v lr="$lr" -v fr="$fr" 'BEGIN {
    printf "%-9s %10.1f %10.1f %6.2fx %10.0f %10.0f %8.1f MB %8.1f MB\n", n, lw, fw, lw / fw, lc, fc, lr / 1000, fr / 1000 }'
done
awk -v a="${wall[100000]}" -v b="${wall[10000]}" 'BEGIN { printf "100k / 10k (little): %.2fx\n", a / b }'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(wall and CPU: medians; RSS: the largest of the runs)"
