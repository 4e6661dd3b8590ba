#!/usr/bin/env bash
# Memory of gwdev up with the web view open under load: gwdev up --no-tui
# serves samples/basic (on a port of your choice); headless Chromium keeps
# the web view open (Topology, with the live traces streaming into it);
# wrk sends requests flat out for the whole run (to /api/x, forwarded to
# the api Service's echo backend), and every 30 s a save changes the
# route's first match between PathPrefix /api and /ap (so that the open
# page reloads the topology; /api/x is still forwarded, by the first rule
# or the catch-all). gwdev's RSS
# (VmRSS) and the admin API's trace stream counters are printed every
# interval; the last line compares the RSS of the first interval with the
# last one's, both under load.
# Needs wrk, chromium and curl:  apt-get install -y wrk chromium curl
# Usage: bench/web-memory.sh [duration=60m] [interval=60s] [port=18080] [admin=19901] [connections=32] [threads=2]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
dur=${1:-60m}; interval=${2:-60s}; port=${3:-18080}; admin=${4:-19901}; conns=${5:-32}; threads=${6:-2}
need bench/web-memory.sh "wrk chromium curl" wrk chromium curl
seconds() { case $1 in *m) echo $(( ${1%m} * 60 ));; *s) echo "${1%s}";; *) echo "$1";; esac; }
total=$(seconds "$dur"); step=$(seconds "$interval")

go build -o "$tmp/gwdev" ./cmd/gwdev
mkdir -p "$tmp/basic"
cp samples/basic/*.yaml "$tmp/basic/"
sed -i "s/port: 8080$/port: $port/" "$tmp/basic/gateway.yaml"
"$tmp/gwdev" up --no-tui --admin "127.0.0.1:$admin" "$tmp/basic" > "$tmp/gwdev.log" 2>&1 &
gw=$!; pids+=("$gw")
wait_200 "http://127.0.0.1:$port/" -H 'Host: app.example.com'
wait_200 "http://127.0.0.1:$admin/ui/"

chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$tmp/profile" --remote-debugging-port=0 \
  "http://127.0.0.1:$admin/ui/#topology" > "$tmp/chromium.log" 2>&1 &
pids+=("$!")
sleep 3

# wrk runs a little past the last sample, so that every sample is under load.
wrk -t"$threads" -c"$conns" -d"$((total + 10))s" --latency -H 'Host: app.example.com' "http://127.0.0.1:$port/api/x" > "$tmp/wrk.log" 2>&1 &
wrkpid=$!; pids+=("$wrkpid")

rss() { awk '/^VmRSS/ {print $2}' "/proc/$gw/status"; }
metric() { curl -s "http://127.0.0.1:$admin/metrics" | awk -v m="$1" '$1==m {print $2}'; }
# live_kib is the heap the last collection kept: the next one's target
# (go_memstats_next_gc_bytes) over 1 + GOGC/100 (go_gc_gogc_percent, which
# gwdev changes while it loads): a leak shows there before it shows in RSS.
printf "%8s %10s %10s %8s %10s %10s\n" elapsed rss_kib live_kib streams queued_b reloads
first=""; last=""; elapsed=0; next_save=30
while [ "$elapsed" -lt "$total" ]; do
  sleep 1; elapsed=$((elapsed + 1))
  if [ "$elapsed" -ge "$next_save" ]; then # a save: another path prefix, so the topology changes
    if grep -q 'value: /api$' "$tmp/basic/app.yaml"; then
      sed -i 's#value: /api$#value: /ap#' "$tmp/basic/app.yaml"
    else
      sed -i 's#value: /ap$#value: /api#' "$tmp/basic/app.yaml"
    fi
    next_save=$((next_save + 30))
  fi
  if [ $((elapsed % step)) -eq 0 ]; then
    r=$(rss); last=$r
    [ -z "$first" ] && first=$r
    live=$(awk -v b="$(metric go_memstats_next_gc_bytes)" -v p="$(metric go_gc_gogc_percent)" 'BEGIN { print b / 1024 / (1 + p / 100) }')
    printf "%8s %10s %10.0f %8s %10s %10s\n" "${elapsed}s" "$r" "$live" \
      "$(metric gwdev_trace_streams)" "$(metric gwdev_trace_stream_queued_bytes)" "$(metric gwdev_reloads_total)" | tee -a "$tmp/samples"
  fi
done
wait "$wrkpid" || true
echo "wrk: $(awk '/Requests\/sec/ {print $2}' "$tmp/wrk.log") requests/s, $(awk '/requests in/ {print $1}' "$tmp/wrk.log") requests, p99 $(awk '$1=="99%" {print $2}' "$tmp/wrk.log")"
grep -E 'Non-2xx|Socket errors' "$tmp/wrk.log" || echo "wrk: every answer 2xx, no socket errors"
awk -v a="$first" -v b="$last" 'BEGIN {printf "RSS under load: after the first interval %d KiB, at the last %d KiB (%+.1f%%)\n", a, b, 100*(b-a)/a}'
# The means of the first and the last sixth of the samples (at least one),
# RSS and live heap, and the extremes of RSS.
awk '{ r[NR] = $2; g[NR] = $3 } END { k = int(NR / 6); if (k < 1) k = 1
  for (i = 1; i <= k; i++) { ra += r[i]; ga += g[i]; rb += r[NR - k + i]; gb += g[NR - k + i] }
  min = r[1]; max = r[1]; for (i = 1; i <= NR; i++) { if (r[i] < min) min = r[i]; if (r[i] > max) max = r[i] }
  printf "means of the first and last %d samples: RSS %.1f -> %.1f MiB, live heap %.1f -> %.1f MiB; RSS between %.1f and %.1f MiB\n", k, ra / k / 1024, rb / k / 1024, ga / k / 1024, gb / k / 1024, min / 1024, max / 1024 }' "$tmp/samples"
