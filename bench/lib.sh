# Shared by the bench scripts, which source it after cd-ing to the
# repository root: tool checks, a temporary directory with background
# processes cleaned up on exit, waiting for a URL, and one wrk run.
export GOTOOLCHAIN=go1.27.3 # the repository's toolchain, as in the Makefile

# need SCRIPT PACKAGES TOOL...: stop with the apt-get line when a tool is
# missing.
need() {
  local script=$1 packages=$2 tool; shift 2
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$script needs $tool (apt-get install -y $packages)"; exit 1; }
  done
}

# $tmp and the processes in pids are removed and killed on exit.
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; sleep 0.2; rm -rf "$tmp"; }
trap cleanup EXIT

# wait_200 URL [curl args...]: wait up to 5 s for URL to answer 200; on
# failure print gwdev's log, if any, and stop.
wait_200() {
  local url=$1 code=""; shift
  for _ in $(seq 50); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$@" "$url" || true)
    [ "$code" = 200 ] && return 0
    sleep 0.1
  done
  echo "$url does not answer 200 (got $code)"
  [ -f "$tmp/gwdev.log" ] && cat "$tmp/gwdev.log"
  exit 1
}

# wrk_run NAME WIDTH URL [wrk args...]: one wrk run with $threads, $conns
# and $dur; prints requests/s, p50 and p99 and appends "NAME requests/s" to
# $tmp/rps.
wrk_run() {
  local name=$1 width=$2 url=$3 out rps p50 p99; shift 3
  out=$(wrk -t"$threads" -c"$conns" -d"$dur" --latency -H 'Host: api.example.com' "$@" "$url" 2>&1)
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1=="50%" {print $2}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  printf "%-${width}s %12s %10s %10s\n" "$name" "$rps" "$p50" "$p99"
  echo "$name $rps" >> "$tmp/rps"
}
