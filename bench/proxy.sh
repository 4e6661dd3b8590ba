#!/usr/bin/env bash
# Side-by-side HTTP proxy benchmark on loopback: wrk against
#   - the backend directly,
#   - gwdev (an HTTPRoute with a path match and a header filter),
#   - nginx and haproxy configured for the same route,
# all forwarding to the same small Go backend. Prints requests/s and
# p50/p99 latency for each. Needs wrk, nginx and haproxy:
#   apt-get install -y wrk nginx haproxy
# Usage: bench/proxy.sh [duration=10s] [connections=64] [threads=2]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
dur=${1:-10s}; conns=${2:-64}; threads=${3:-2}
need bench/proxy.sh "wrk nginx haproxy" wrk nginx haproxy curl
go build -o "$tmp/gwdev" ./cmd/gwdev
go build -o "$tmp/backend" ./bench/backend

BACKEND=127.0.0.1:18080 GWDEV=127.0.0.1:18081 NGINX=127.0.0.1:18082 HAPROXY=127.0.0.1:18083
"$tmp/backend" -addr $BACKEND & pids+=($!)

mkdir -p "$tmp/manifests"
cat > "$tmp/manifests/bench.yaml" <<YAML
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: bench}
spec:
  gatewayClassName: gwdev
  addresses: [{type: IPAddress, value: 127.0.0.1}]
  listeners: [{name: http, protocol: HTTP, port: 18081}]
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
"$tmp/gwdev" up --backend default/api:80=$BACKEND "$tmp/manifests" >"$tmp/gwdev.log" 2>&1 & pids+=($!)

cat > "$tmp/nginx.conf" <<NGINX
worker_processes 2;
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  upstream api { server $BACKEND; keepalive 128; }
  server {
    listen $NGINX;
    server_name api.example.com;
    location /api {
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
      proxy_set_header X-Route api;
      proxy_pass http://api;
    }
    location / { return 404; }
  }
}
NGINX
nginx -c "$tmp/nginx.conf" -g 'daemon off;' & pids+=($!)

cat > "$tmp/haproxy.cfg" <<HAP
global
  nbthread 2
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  option http-keep-alive
frontend fe
  bind $HAPROXY
  acl host_api hdr(host) -i api.example.com
  acl path_api path_beg /api
  http-request set-header X-Route api if host_api path_api
  use_backend api if host_api path_api
backend api
  http-reuse always
  server s1 $BACKEND
HAP
haproxy -f "$tmp/haproxy.cfg" & pids+=($!)

# Wait for every side to answer.
for addr in $BACKEND $GWDEV $NGINX $HAPROXY; do
  wait_200 "http://$addr/api/x" -H 'Host: api.example.com'
done

run() { wrk_run "$1" 10 "http://$2/api/users"; } # name addr
echo "wrk -t$threads -c$conns -d$dur on loopback, 256-byte responses ($(nproc) cores shared by client, proxy and backend)"
printf '%-10s %12s %10s %10s\n' side requests/s p50 p99
run direct $BACKEND
run gwdev $GWDEV
run nginx $NGINX
run haproxy $HAPROXY
awk '{r[$1]=$2} END {printf "gwdev/nginx %.2f  gwdev/haproxy %.2f  gwdev/direct %.2f\n", r["gwdev"]/r["nginx"], r["gwdev"]/r["haproxy"], r["gwdev"]/r["direct"]}' "$tmp/rps"
