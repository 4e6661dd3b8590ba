#!/usr/bin/env bash
# Times `gwdev check` (loading, CRD validation and translation) on generated
# folders of 1,000 and 10,000 HTTPRoutes, with the summary, -o yaml and
# -o json (every object with its status, what CI runs). Wall time, best and
# median of 5; user+sys CPU time, median; peak RSS (the kernel's maximum
# resident set size), median of 5.
#
# bench/check.sh REF also builds gwdev at the git revision REF (main, a
# commit) and runs the two builds interleaved, one after the other in each
# round, so that a shared machine's load falls on both alike; it prints
# both and the ratios this tree / REF.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
need bench/check.sh time /usr/bin/time
base=${1:-}
go build -o "$tmp/gwdev" ./cmd/gwdev
builds=(gwdev)
if [ -n "$base" ]; then
  mkdir "$tmp/base"
  git archive "$base" | tar -x -C "$tmp/base"
  (cd "$tmp/base" && go build -o "$tmp/gwdev-base" ./cmd/gwdev)
  builds=(gwdev-base gwdev)
fi

# stats FILE: "best median cpu rss" of the runs in FILE (lines of
# "wall user sys maxrss-KB").
stats() {
  local best median cpu rss
  best=$(cut -d' ' -f1 "$1" | sort -n | head -1)
  median=$(cut -d' ' -f1 "$1" | sort -n | sed -n 3p)
  cpu=$(awk '{printf "%.2f\n", $2 + $3}' "$1" | sort -n | sed -n 3p)
  rss=$(cut -d' ' -f4 "$1" | sort -n | sed -n 3p)
  echo "$best $median $cpu $((rss / 1024))"
}

for n in 1000 10000; do
  go run ./bench/genroutes -n "$n" -o "$tmp/r$n"
  for out in summary yaml json; do
    for b in "${builds[@]}"; do : > "$tmp/runs-$b"; done
    for i in 1 2 3 4 5; do
      for b in "${builds[@]}"; do
        /usr/bin/time -o "$tmp/time" -f '%e %U %S %M' "$tmp/$b" check -o "$out" "$tmp/r$n" >/dev/null 2>&1 || true
        cat "$tmp/time" >> "$tmp/runs-$b"
      done
    done
    for b in "${builds[@]}"; do
      read -r best median cpu rss <<<"$(stats "$tmp/runs-$b")"
      label=$b
      [ "$b" = gwdev-base ] && label=$base
      printf '%-10s check -o %-7s %5d HTTPRoutes (+%d Services): best %.2fs  median %.2fs  cpu %.2fs  peak RSS %d MB\n' \
        "$label" "$out" "$n" $((2 * n)) "$best" "$median" "$cpu" "$rss"
    done
    if [ -n "$base" ]; then
      read -r _ m0 c0 r0 <<<"$(stats "$tmp/runs-gwdev-base")"
      read -r _ m1 c1 r1 <<<"$(stats "$tmp/runs-gwdev")"
      awk -v m0="$m0" -v m1="$m1" -v c0="$c0" -v c1="$c1" -v r0="$r0" -v r1="$r1" \
        'BEGIN { printf "           this tree / base: median wall %.2f  cpu %.2f  peak RSS %.2f\n", m1 / m0, c1 / c0, r1 / r0 }'
    fi
  done
done
