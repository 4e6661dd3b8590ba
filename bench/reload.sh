#!/usr/bin/env bash
# Edit-to-served latency of `gwdev up`: on generated folders of 1,000 and
# 10,000 HTTPRoutes (bench/genroutes), bench/reloadprobe saves a new
# HTTPRoute file the way editors do (write a dotfile, rename it into place)
# SAVES times and sends requests with its Host until one is answered 200;
# it prints every save, the median and the max. After each run the
# reloads' own timings from gwdev's log (load, translate, apply) are
# printed as medians.
#
# The load column is the watcher's update: the walk, the changed file,
# and the last Snapshot patched (watch/merged.go). The translate column is
# the engine's translation until the whole result:
# incremental since engine/incremental.go (the routes that did not change
# keep their compiled rules when only routes changed; gwdev's log says
# "N of M routes reused"), the rest of the result in full. apply is the
# data plane's Apply, which compiles the table, reusing the last router's
# rules and virtual hosts that did not change and keeping the pool's maps
# between compiles (emulator/reuse.go), and
# swaps it in atomically (listeners kept). Since engine.TranslateTableFirst
# the two overlap: Apply starts when the table is built and the rest of
# the result is finished meanwhile.
#
# bench/reload.sh REF also builds gwdev at the git revision REF (main, a
# commit) and runs the two builds interleaved, one after the other in each
# round, so that a shared machine's load falls on both alike.
#
# Usage: bench/reload.sh [REF] (env: SAVES=7 ROUNDS=2 SIZES="1000 10000")
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
need bench/reload.sh python3 python3
base=${1:-}
saves=${SAVES:-7}
rounds=${ROUNDS:-2}
sizes=${SIZES:-1000 10000}
go build -o "$tmp/gwdev" ./cmd/gwdev
go build -o "$tmp/reloadprobe" ./bench/reloadprobe
runs=(gwdev)
if [ -n "$base" ]; then
  mkdir "$tmp/base"
  git archive "$base" | tar -x -C "$tmp/base"
  (cd "$tmp/base" && go build -o "$tmp/gwdev-base" ./cmd/gwdev)
  runs=(base gwdev)
fi

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# median of the numbers on stdin.
median() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'; }

# ms DURATION: a Go duration (1.2ms, 350µs, 1.5s) in milliseconds.
ms() { awk -v d="$1" 'BEGIN { if (d ~ /µs$/) print d/1000; else if (d ~ /ms$/) print d+0; else if (d ~ /s$/) print d*1000; else print d }'; }

for n in $sizes; do
  for round in $(seq "$rounds"); do
    for run in "${runs[@]}"; do
      port=$(freeport)
      dir="$tmp/r$n-$run-$round"
      go run ./bench/genroutes -n "$n" -port "$port" -o "$dir"
      bin=$tmp/gwdev
      label=this-tree
      if [ "$run" = base ]; then bin=$tmp/gwdev-base label=$base; fi
      "$bin" up --no-tui --admin off --port-offset 0 "$dir" > "$tmp/gwdev.log" 2>&1 &
      pid=$!
      pids+=("$pid")
      for _ in $(seq 600); do
        grep -q 'gwdev: watching' "$tmp/gwdev.log" && break
        sleep 0.1
      done
      wait_200 "http://127.0.0.1:$port/" -H 'Host: app-0.example.com'
      out=$("$tmp/reloadprobe" -dir "$dir" -addr "127.0.0.1:$port" -saves "$saves" -tag "probe-$round")
      sleep 0.2
      kill "$pid"; wait "$pid" 2>/dev/null || true
      summary=$(echo "$out" | tail -1)
      all=$(echo "$out" | awk '/^save/ {printf "%s ", $2}')
      # gwdev: reload #3 (…): N objects, …; load 1ms, translate 2ms, apply 3ms
      grep 'reload #' "$tmp/gwdev.log" | sed 's/.*; load \([^,]*\), translate \([^,]*\), apply \(.*\)$/\1 \2 \3/' > "$tmp/phases"
      load=$(while read -r l _ _; do ms "$l"; done < "$tmp/phases" | median)
      tr=$(while read -r _ t _; do ms "$t"; done < "$tmp/phases" | median)
      ap=$(while read -r _ _ a; do ms "$a"; done < "$tmp/phases" | median)
      printf '%5d routes %-10s round %d: edit-to-served %s  (median of reloads: load %sms translate %sms apply %sms)\n' \
        "$n" "$label" "$round" "$summary" "$load" "$tr" "$ap"
      printf '        saves: %s\n' "$all"
    done
  done
done
