#!/usr/bin/env bash
# Proxy throughput with the dashboard on versus --no-tui: gwdev up serves a
# generated folder of 1,000 HTTPRoutes; wrk drives it flat out once with the
# TUI running in a tmux pane (160x48, Traces view, following) and once with
# --no-tui. Rounds alternate; prints requests/s of each round, the medians
# and the ratio. Needs wrk and tmux:  apt-get install -y wrk tmux
# Both sides run in a tmux pane: a pane is a session of its own, and with
# Linux's autogroup scheduling (/proc/sys/kernel/sched_autogroup_enabled)
# a session is a scheduling group that shares the CPU with wrk's group
# as a whole. A --no-tui gwdev started from this script would share wrk's
# group instead and get another share of the CPU: 10-15% of the rate
# that is not the dashboard's (docs/decisions.md, issue 28, tuicost).
# Usage: bench/tui.sh [duration=10s] [connections=64] [threads=2] [rounds=3]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
dur=${1:-10s}; conns=${2:-64}; threads=${3:-2}; rounds=${4:-3}
need bench/tui.sh "wrk tmux curl" wrk tmux curl
sock="gwdev-bench-$$"
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  sleep 0.3; rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/gwdev" ./cmd/gwdev
go run ./bench/genroutes -n 1000 -o "$tmp/routes" >/dev/null

# The Gateway listens on port 80, or 8080 when gwdev cannot bind 80.
url=""
wait_ready() {
  for _ in $(seq 1 600); do
    for u in http://127.0.0.1:80/ http://127.0.0.1:8080/; do
      if [ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: app-500.example.com' "$u" || true)" = 200 ]; then
        url=$u; return 0
      fi
    done
    sleep 0.1
  done
  echo "gwdev did not start serving"; exit 1
}
wait_down() {
  for _ in $(seq 1 300); do
    curl -s -o /dev/null -m 0.2 "$url" || return 0
    sleep 0.1
  done
}
rps() { wrk -t"$threads" -c"$conns" -d"$dur" -H 'Host: app-500.example.com' "$url" | awk '/Requests\/sec/ {print $2}'; }

declare -a tui plain
for r in $(seq 1 "$rounds"); do
  tmux -L "$sock" new-session -d -s bench -x 160 -y 48 "$tmp/gwdev" up --no-tui "$tmp/routes"
  wait_ready
  plain+=("$(rps)")
  tmux -L "$sock" send-keys -t bench C-c
  for _ in $(seq 1 100); do tmux -L "$sock" has-session -t bench 2>/dev/null || break; sleep 0.1; done
  wait_down

  tmux -L "$sock" new-session -d -s bench -x 160 -y 48 "$tmp/gwdev" up "$tmp/routes"
  wait_ready
  tmux -L "$sock" send-keys -t bench 4
  tui+=("$(rps)")
  tmux -L "$sock" send-keys -t bench q
  for _ in $(seq 1 100); do tmux -L "$sock" has-session -t bench 2>/dev/null || break; sleep 0.1; done
  wait_down
  echo "round $r: --no-tui ${plain[-1]} req/s, TUI ${tui[-1]} req/s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mp=$(median "${plain[@]}"); mt=$(median "${tui[@]}")
awk -v p="$mp" -v t="$mt" 'BEGIN {printf "median: --no-tui %.0f req/s, TUI %.0f req/s, TUI/--no-tui %.3f (%.1f%% drop)\n", p, t, t/p, 100*(1-t/p)}'
