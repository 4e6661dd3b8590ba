#!/usr/bin/env bash
# Times `gwdev check` (loading, CRD validation and translation) on generated
# folders of 1,000 and 10,000 HTTPRoutes, with the summary, -o yaml and
# -o json (every object with its status, what CI runs). Wall time, best and
# median of 5; peak RSS (the kernel's maximum resident set size), median of 5.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
need bench/check.sh time /usr/bin/time
go build -o "$tmp/gwdev" ./cmd/gwdev
for n in 1000 10000; do
  go run ./bench/genroutes -n "$n" -o "$tmp/r$n"
  for out in summary yaml json; do
    : > "$tmp/runs"
    for i in 1 2 3 4 5; do
      /usr/bin/time -o "$tmp/time" -f '%e %M' "$tmp/gwdev" check -o "$out" "$tmp/r$n" >/dev/null || true
      cat "$tmp/time" >> "$tmp/runs"
    done
    best=$(sort -n "$tmp/runs" | head -1 | cut -d' ' -f1)
    median=$(sort -n "$tmp/runs" | sed -n 3p | cut -d' ' -f1)
    rss=$(cut -d' ' -f2 "$tmp/runs" | sort -n | sed -n 3p)
    printf 'gwdev check -o %-7s %5d HTTPRoutes (+%d Services): best %.2fs  median %.2fs  peak RSS %d MB\n' \
      "$out" "$n" $((2 * n)) "$best" "$median" $((rss / 1024))
  done
done
