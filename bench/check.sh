#!/usr/bin/env bash
# Times `gwdev check` (loading, CRD validation and translation) on generated
# folders of 1,000 and 10,000 HTTPRoutes. Wall time, best and median of 5.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
go build -o "$tmp/gwdev" ./cmd/gwdev
for n in 1000 10000; do
  go run ./bench/genroutes -n "$n" -o "$tmp/r$n"
  times=()
  for i in 1 2 3 4 5; do
    s=$(date +%s.%N)
    "$tmp/gwdev" check "$tmp/r$n" >/dev/null
    e=$(date +%s.%N)
    times+=("$(echo "$e - $s" | bc -l)")
  done
  sorted=$(printf '%s\n' "${times[@]}" | sort -n)
  best=$(echo "$sorted" | head -1)
  median=$(echo "$sorted" | sed -n 3p)
  printf 'gwdev check, %5d HTTPRoutes (+%d Services): best %.3fs  median %.3fs\n' "$n" $((2 * n)) "$best" "$median"
done
