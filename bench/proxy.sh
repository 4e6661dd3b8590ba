#!/usr/bin/env bash
# Side-by-side HTTP proxy benchmark on loopback: gwdev, nginx (one worker,
# keep-alive upstream) and haproxy (one thread, connection reuse), each
# configured for the same route (host api.example.com, PathPrefix /api, a
# request header set) and forwarding to the same small Go backend, in three
# client protocols:
#   http1  wrk, HTTP/1.1 keep-alive
#   https  wrk, HTTP/1.1 keep-alive over TLS 1.3 (ECDSA P-256)
#   h2c    h2load, HTTP/2 with prior knowledge, one stream in flight per
#          connection (h2load reports no percentiles: mean latency instead)
# The sides run interleaved (the order rotates every round), several rounds,
# so that other load on the machine hits them alike; the summary gives each
# side's median requests/s and p99 and the ratios gwdev/nginx and
# gwdev/haproxy. gwdev runs as `gwdev up` does by default: traces kept,
# metrics collected, admin API on. Needs wrk, h2load, nginx and haproxy:
#   apt-get install -y wrk nghttp2-client nginx haproxy
# Usage: bench/proxy.sh [duration=5s] [rounds=3] [connections=64] [threads=2] [modes="http1 https h2c"]
# http1 also runs two references: "direct", wrk straight to the backend
# (the ceiling), and "relay", bench/relay (the floor of a Go proxy with a
# goroutine per connection: copies heads and bodies, nothing else).
# GWDEV_BIN=path benchmarks that gwdev binary instead of building one;
# GWDEV_BASE=path adds a side "base" running that gwdev binary (an older
# build, to compare builds in the same rounds); GWDEV_FLAGS adds flags to
# `gwdev up`. BACKEND_KIND=nginx replaces the Go backend with a second nginx
# (one worker) answering the same 256-byte body as a static 200: the
# backend then costs least, so each proxy's own cost dominates.
# Caddy (bench/caddy: github.com/caddyserver/caddy/v2 v2.11.9 with its
# standard modules, built from the module proxy) is a side of its own in
# every mode: its defaults, the same route, and an upstream keep-alive pool
# as large as nginx's and haproxy's (256 idle connections); CADDY=0 leaves
# it out.
# FHPROXY=1 adds the side "fasthttp" to http1: bench/fhproxy, the same
# route through fasthttp's Server and HostClient (the prototype of the
# lane decision in docs/decisions.md).
# CPU per request: each proxy's user+system CPU time over a run (from
# /proc/PID/stat) divided by the requests it served, in microseconds.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
dur=${1:-5s}; rounds=${2:-3}; conns=${3:-64}; threads=${4:-2}; modes=${5:-http1 https h2c}
need bench/proxy.sh "wrk nghttp2-client nginx haproxy" wrk h2load nginx haproxy curl
if [ -n "${GWDEV_BIN:-}" ]; then cp "$GWDEV_BIN" "$tmp/gwdev"; else go build -o "$tmp/gwdev" ./cmd/gwdev; fi
go build -o "$tmp/backend" ./bench/backend
go build -o "$tmp/relay" ./bench/relay
go build -o "$tmp/tlsbench" ./bench/tlsbench
"$tmp/tlsbench" certs "$tmp"

BACKEND=127.0.0.1:18080
declare -A addr=(
  [gwdev.http1]=127.0.0.1:18081 [nginx.http1]=127.0.0.1:18082 [haproxy.http1]=127.0.0.1:18083
  [gwdev.https]=127.0.0.1:18091 [nginx.https]=127.0.0.1:18092 [haproxy.https]=127.0.0.1:18093
  [gwdev.h2c]=127.0.0.1:18081   [nginx.h2c]=127.0.0.1:18102   [haproxy.h2c]=127.0.0.1:18103
  [direct.http1]=$BACKEND [relay.http1]=127.0.0.1:18085 [fasthttp.http1]=127.0.0.1:18086
  [caddy.http1]=127.0.0.1:18087 [caddy.https]=127.0.0.1:18097 [caddy.h2c]=127.0.0.1:18107
  [base.http1]=127.0.0.1:18084 [base.https]=127.0.0.1:18094 [base.h2c]=127.0.0.1:18084
)
[ -n "${GWDEV_BASE:-}" ] || unset 'addr[base.http1]' 'addr[base.https]' 'addr[base.h2c]'
[ -n "${FHPROXY:-}" ] || unset 'addr[fasthttp.http1]'
[ "${CADDY:-1}" != 0 ] || unset 'addr[caddy.http1]' 'addr[caddy.https]' 'addr[caddy.h2c]'
if [ "${BACKEND_KIND:-go}" = nginx ]; then
  body=$(head -c 256 /dev/zero | tr '\0' 'a')
  cat > "$tmp/nginx-backend.conf" <<NGINX
worker_processes 1;
pid $tmp/nginx-backend.pid;
error_log $tmp/nginx-backend-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  server { listen $BACKEND; location / { default_type application/octet-stream; return 200 "$body"; } }
}
NGINX
  nginx -c "$tmp/nginx-backend.conf" -g 'daemon off;' & pids+=($!)
else
  "$tmp/backend" -addr $BACKEND & pids+=($!)
fi
declare -A sidepid=([direct]=$!)
"$tmp/relay" -addr "${addr[relay.http1]}" -upstream $BACKEND & pids+=($!); sidepid[relay]=$!
if [ -n "${FHPROXY:-}" ]; then
  (cd bench/fhproxy && go build -o "$tmp/fhproxy" .)
  "$tmp/fhproxy" -addr "${addr[fasthttp.http1]}" -upstream $BACKEND & pids+=($!); sidepid[fasthttp]=$!
fi

mkdir -p "$tmp/manifests"
cp "$tmp/secret.yaml" "$tmp/manifests/"
cat > "$tmp/manifests/bench.yaml" <<YAML
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: bench}
spec:
  gatewayClassName: gwdev
  addresses: [{type: IPAddress, value: 127.0.0.1}]
  listeners:
  - {name: http, protocol: HTTP, port: 18081}
  - {name: https, protocol: HTTPS, port: 18091, tls: {certificateRefs: [{name: bench-tls}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api}
spec:
  parentRefs: [{name: bench}]
  hostnames: [api.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: X-Route, value: api}]}
    backendRefs: [{name: api, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec: {ports: [{port: 80}]}
YAML
# shellcheck disable=SC2086
"$tmp/gwdev" up --no-tui --admin 127.0.0.1:0 --backend default/api:80=$BACKEND ${GWDEV_FLAGS:-} \
  "$tmp/manifests" >"$tmp/gwdev.log" 2>&1 & pids+=($!); sidepid[gwdev]=$!
if [ -n "${GWDEV_BASE:-}" ]; then
  mkdir -p "$tmp/base"
  cp "$tmp/secret.yaml" "$tmp/base/"
  sed -e 's/port: 18081/port: 18084/' -e 's/port: 18091/port: 18094/' "$tmp/manifests/bench.yaml" > "$tmp/base/bench.yaml"
  # shellcheck disable=SC2086
  "$GWDEV_BASE" up --no-tui --admin 127.0.0.1:0 --backend default/api:80=$BACKEND ${GWDEV_FLAGS:-} \
    "$tmp/base" >"$tmp/base.log" 2>&1 & pids+=($!); sidepid[base]=$!
fi

# The same route in nginx: one server block per listener.
location='
    location /api {
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Route api;
      proxy_pass http://api;
    }
    location / { return 404; }'
cat > "$tmp/nginx.conf" <<NGINX
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  upstream api { server $BACKEND; keepalive 128; }
  server { listen ${addr[nginx.http1]}; server_name api.example.com; $location
  }
  server { listen ${addr[nginx.https]} ssl; server_name api.example.com;
    ssl_certificate $tmp/server.crt; ssl_certificate_key $tmp/server.key; ssl_protocols TLSv1.3; $location
  }
  server { listen ${addr[nginx.h2c]} http2; server_name api.example.com; $location
  }
}
NGINX
nginx -c "$tmp/nginx.conf" -g 'daemon off;' & pids+=($!); sidepid[nginx]=$!

cat > "$tmp/haproxy.cfg" <<HAP
global
  nbthread 1
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  option http-keep-alive
frontend fe
  bind ${addr[haproxy.http1]}
  bind ${addr[haproxy.https]} ssl crt $tmp/server.pem alpn http/1.1
  bind ${addr[haproxy.h2c]} proto h2
  acl host_api hdr(host) -i api.example.com
  acl path_api path_beg /api
  http-request set-header X-Route api if host_api path_api
  use_backend api if host_api path_api
backend api
  http-reuse always
  server s1 $BACKEND
HAP
haproxy -f "$tmp/haproxy.cfg" & pids+=($!); sidepid[haproxy]=$!

if [ "${CADDY:-1}" != 0 ]; then
  (cd bench/caddy && go build -o "$tmp/caddy" .)
  # The same route in Caddy, with its defaults but for the upstream pool
  # (Caddy keeps 32 idle connections per host by default) and what a local
  # benchmark does not want (the admin endpoint, automatic HTTPS).
  route='
  @api path /api /api/*
  handle @api {
    reverse_proxy '$BACKEND' {
      header_up X-Route api
      transport http {
        keepalive_idle_conns 256
        keepalive_idle_conns_per_host 256
      }
    }
  }
  respond 404'
  cat > "$tmp/Caddyfile" <<CADDY
{
  admin off
  auto_https off
  servers ${addr[caddy.h2c]} {
    protocols h1 h2c
  }
}
http://api.example.com:${addr[caddy.http1]##*:} {
  bind 127.0.0.1$route
}
https://api.example.com:${addr[caddy.https]##*:} {
  bind 127.0.0.1
  tls $tmp/server.crt $tmp/server.key$route
}
http://api.example.com:${addr[caddy.h2c]##*:} {
  bind 127.0.0.1$route
}
CADDY
  # exec: the pid killed at the end is Caddy's own, not a subshell's.
  (cd "$tmp" && XDG_DATA_HOME="$tmp" XDG_CONFIG_HOME="$tmp" exec "$tmp/caddy" run --config "$tmp/Caddyfile" --adapter caddyfile >"$tmp/caddy.log" 2>&1) & pids+=($!); sidepid[caddy]=$!
fi

# Wait for every side to answer.
for key in "${!addr[@]}"; do
  case $key in
    *.https) wait_200 "https://${addr[$key]}/api/x" -k -H 'Host: api.example.com' ;;
    *.h2c) wait_200 "http://${addr[$key]}/api/x" --http2-prior-knowledge -H 'Host: api.example.com' ;;
    *) wait_200 "http://${addr[$key]}/api/x" -H 'Host: api.example.com' ;;
  esac
done

# ms VALUE: wrk's latency ("812.00us", "1.20ms", "1.02s") in milliseconds.
ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /[0-9]s$/) n *= 1000; printf "%.2f", n }'; }

# cpu_ticks PID: user+system CPU clock ticks of PID and its children
# (nginx's worker).
cpu_ticks() {
  local p t=0
  for p in "$1" $(pgrep -P "$1" || true); do
    [ -r "/proc/$p/stat" ] && t=$(( t + $(awk '{print $14 + $15}' "/proc/$p/stat") ))
  done
  echo "$t"
}
hz=$(getconf CLK_TCK)
# wrk prints p50, p99 and p99.9 in microseconds with this script.
cat > "$tmp/pct.lua" <<'LUA'
done = function(summary, latency, requests)
  for _, p in ipairs({50, 99, 99.9}) do io.write(string.format("PCT %g %d\n", p, latency:percentile(p))) end
end
LUA

# one MODE SIDE ROUND: one run; appends "MODE SIDE ROUND rps p99ms p50ms
# p99.9ms cpu-us/req" to $tmp/runs (h2c: p50 and p99.9 are 0).
one() {
  local mode=$1 side=$2 round=$3 a=${addr[$2.$1]} out rps lat p50=0 p999=0 c0 c1 cpu pid
  pid=${sidepid[$side]:-}
  c0=$(cpu_ticks "$pid")
  case $mode in
    http1) out=$(wrk -t"$threads" -c"$conns" -d"$dur" --latency -s "$tmp/pct.lua" -H 'Host: api.example.com' "http://$a/api/users" 2>&1) ;;
    https) out=$(wrk -t"$threads" -c"$conns" -d"$dur" --latency -s "$tmp/pct.lua" -H 'Host: api.example.com' "https://$a/api/users" 2>&1) ;;
    h2c) out=$(h2load -t"$threads" -c"$conns" -m1 -D"${dur%s}" -H ':authority: api.example.com' "http://$a/api/users" 2>&1) ;;
  esac
  if [ "$mode" = h2c ]; then
    rps=$(echo "$out" | awk '/^finished in/ {gsub(",", ""); print $4}')
    lat=$(ms "$(echo "$out" | awk '/^time for request:/ {print $6}')")
    [ "$(echo "$out" | awk '/^requests:/ {print $10}')" = 0 ] || { echo "$side $mode: requests failed"; echo "$out"; exit 1; }
  else
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    lat=$(echo "$out" | awk '$1=="PCT" && $2=="99" {printf "%.2f", $3 / 1000}')
    p50=$(echo "$out" | awk '$1=="PCT" && $2=="50" {printf "%.2f", $3 / 1000}')
    p999=$(echo "$out" | awk '$1=="PCT" && $2=="99.9" {printf "%.2f", $3 / 1000}')
    if echo "$out" | grep -q 'Non-2xx\|Socket errors'; then echo "$side $mode: errors"; echo "$out"; exit 1; fi
  fi
  c1=$(cpu_ticks "$pid")
  cpu=$(awk -v t=$((c1 - c0)) -v hz="$hz" -v r="$rps" -v d="${dur%s}" 'BEGIN { printf "%.1f", t / hz * 1e6 / (r * d) }')
  printf '  %-6s %-8s round %d %10.0f req/s  p50 %6s  p99 %6s  p99.9 %6s ms  %6s us CPU/req\n' "$mode" "$side" "$round" "$rps" "$p50" "$lat" "$p999" "$cpu"
  echo "$mode $side $round $rps $lat $p50 $p999 $cpu" >> "$tmp/runs"
}

# Warm up every side (connections to the backend, heaps) before measuring.
for key in "${!addr[@]}"; do
  case $key in
    *.https) wrk -t1 -c"$conns" -d1s -H 'Host: api.example.com' "https://${addr[$key]}/api/w" >/dev/null 2>&1 ;;
    *.h2c) h2load -c"$conns" -m1 -D1 -H ':authority: api.example.com' "http://${addr[$key]}/api/w" >/dev/null 2>&1 ;;
    *) wrk -t1 -c"$conns" -d1s -H 'Host: api.example.com' "http://${addr[$key]}/api/w" >/dev/null 2>&1 ;;
  esac
done

echo "$(nproc) cores shared by client, proxy and backend; $rounds rounds of $dur per side, -c$conns -t$threads, 256-byte responses"
echo "(h2c: the latency column is h2load's mean, not p99)"
sides=(gwdev nginx haproxy)
[ "${CADDY:-1}" != 0 ] && sides+=(caddy)
[ -n "${GWDEV_BASE:-}" ] && sides+=(base)
for round in $(seq "$rounds"); do
  for mode in $modes; do
    k=$(( (round - 1) % ${#sides[@]} ))
    order=("${sides[@]:$k}" "${sides[@]:0:$k}")
    [ "$mode" = http1 ] && order+=(relay direct)
    [ "$mode" = http1 ] && [ -n "${FHPROXY:-}" ] && order+=(fasthttp)
    for side in "${order[@]}"; do one "$mode" "$side" "$round"; done
  done
done

echo
printf '%-6s %-8s %12s %10s %10s %10s %12s\n' mode side 'req/s med' 'p99 med' 'p50 med' 'p99.9 med' 'CPU us/req'
awk '
  function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { rps[$1 " " $2] = rps[$1 " " $2] " " $4; lat[$1 " " $2] = lat[$1 " " $2] " " $5
    p50[$1 " " $2] = p50[$1 " " $2] " " $6; p999[$1 " " $2] = p999[$1 " " $2] " " $7; cpu[$1 " " $2] = cpu[$1 " " $2] " " $8
    # per-round ratios against nginx, paired within the round
    r[$1, $2, $3] = $4; l[$1, $2, $3] = $5; c[$1, $2, $3] = $8; if (!($1 in seen)) { seen[$1] = 1; order[++nm] = $1 } rounds[$3] = 1 }
  END {
    for (i = 1; i <= nm; i++) {
      m = order[i]
      split("gwdev base nginx haproxy caddy relay direct fasthttp", ss, " ")
      for (k = 1; k <= 8; k++) if ((m " " ss[k]) in rps)
        printf "%-6s %-8s %12.0f %10.2f %10.2f %10.2f %12.1f\n", m, ss[k], median(rps[m " " ss[k]]), median(lat[m " " ss[k]]), median(p50[m " " ss[k]]), median(p999[m " " ss[k]]), median(cpu[m " " ss[k]])
      rr = ""; lr = ""; hr = ""; br = ""; bl = ""; fr = ""; fl = ""; cr = ""; cl = ""; cc = ""
      for (n in rounds) { rr = rr sprintf(" %.2f", r[m, "gwdev", n] / r[m, "nginx", n]); cc = cc sprintf(" %.2f", c[m, "gwdev", n] / c[m, "nginx", n])
                          lr = lr " " l[m, "gwdev", n] / l[m, "nginx", n]; hr = hr " " r[m, "gwdev", n] / r[m, "haproxy", n]
                          if ((m SUBSEP "caddy" SUBSEP n) in r) { cr = cr sprintf(" %.2f", r[m, "gwdev", n] / r[m, "caddy", n]); cl = cl " " l[m, "gwdev", n] / l[m, "caddy", n] }
                          if ((m SUBSEP "relay" SUBSEP n) in r) { fr = fr sprintf(" %.2f", r[m, "relay", n] / r[m, "nginx", n]); fl = fl " " l[m, "relay", n] / l[m, "nginx", n] }
                          if ((m SUBSEP "base" SUBSEP n) in r) { br = br sprintf(" %.2f", r[m, "base", n] / r[m, "nginx", n]); bl = bl " " l[m, "base", n] / l[m, "nginx", n] } }
      printf "%-6s gwdev/nginx req/s %.2f (per round:%s)  p99 %.2fx  gwdev/haproxy req/s %.2f\n", m, median(rr), rr, median(lr), median(hr)
      printf "%-6s gwdev/nginx CPU per request %.2fx (per round:%s)\n", m, median(cc), cc
      if (cr != "") printf "%-6s gwdev/caddy req/s %.2f (per round:%s)  p99 %.2fx\n", m, median(cr), cr, median(cl)
      if (fr != "") printf "%-6s relay/nginx req/s %.2f (per round:%s)  p99 %.2fx  (the floor of a Go proxy: bench/relay)\n", m, median(fr), fr, median(fl)
      if (br != "") printf "%-6s base/nginx  req/s %.2f (per round:%s)  p99 %.2fx\n", m, median(br), br, median(bl)
    }
  }' "$tmp/runs"
