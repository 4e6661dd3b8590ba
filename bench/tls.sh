#!/usr/bin/env bash
# Side-by-side TLS benchmark on loopback, gwdev against nginx and haproxy:
#   1. HTTPS termination: wrk with a new TLS connection per request
#      (Connection: close, so every request pays a full TLS 1.3 handshake),
#      then with keep-alive; each proxy terminates with the same ECDSA P-256
#      certificate and forwards to the same plain HTTP backend.
#   2. TLS passthrough by SNI (gwdev TLS listener + TLSRoute, nginx stream
#      ssl_preread, haproxy tcp req.ssl_sni): wrk new connections to an HTTPS
#      backend through the proxy, and bulk throughput of 4 TLS streams of
#      256 MiB from a TLS source.
# Needs wrk, nginx with the stream module (apt-get install -y libnginx-mod-stream)
# and haproxy. Usage: bench/tls.sh [duration=10s] [connections=32] [threads=2]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
dur=${1:-10s}; conns=${2:-32}; threads=${3:-2}
need bench/tls.sh "wrk nginx libnginx-mod-stream haproxy" wrk nginx haproxy curl
stream_mod=$(ls /usr/lib/nginx/modules/ngx_stream_module.so 2>/dev/null || true)
[ -n "$stream_mod" ] || nginx -V 2>&1 | grep -q -- '--with-stream ' || {
  echo "bench/tls.sh needs nginx's stream module (apt-get install -y libnginx-mod-stream)"; exit 1; }
go build -o "$tmp/gwdev" ./cmd/gwdev
go build -o "$tmp/backend" ./bench/backend
go build -o "$tmp/tlsbench" ./bench/tlsbench
"$tmp/tlsbench" certs "$tmp"

BACKEND=127.0.0.1:18080 TLSBACKEND=127.0.0.1:18443 SOURCE=127.0.0.1:18444
GW_HTTPS=127.0.0.1:18091 NGINX_HTTPS=127.0.0.1:18092 HAPROXY_HTTPS=127.0.0.1:18093
GW_PASS=127.0.0.1:18094 NGINX_PASS=127.0.0.1:18095 HAPROXY_PASS=127.0.0.1:18096
"$tmp/backend" -addr $BACKEND & pids+=($!)
"$tmp/tlsbench" backend -addr $TLSBACKEND -cert "$tmp/server.crt" -key "$tmp/server.key" & pids+=($!)
"$tmp/tlsbench" source -addr $SOURCE -cert "$tmp/server.crt" -key "$tmp/server.key" & pids+=($!)

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
  - {name: https, protocol: HTTPS, port: ${GW_HTTPS##*:}, tls: {certificateRefs: [{name: bench-tls}]}}
  - {name: pass, protocol: TLS, port: ${GW_PASS##*:}, tls: {mode: Passthrough}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api}
spec:
  parentRefs: [{name: bench, sectionName: https}]
  hostnames: [api.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: api, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: any}
spec:
  parentRefs: [{name: bench, sectionName: pass}]
  hostnames: [localhost]
  rules: [{backendRefs: [{name: tls-backend, port: 443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: stream}
spec:
  parentRefs: [{name: bench, sectionName: pass}]
  hostnames: [stream.example.com]
  rules: [{backendRefs: [{name: source, port: 443}]}]
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: tls-backend}
spec: {ports: [{port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: source}
spec: {ports: [{port: 443}]}
YAML
"$tmp/gwdev" up --no-tui --admin 127.0.0.1:0 --backend default/api:80=$BACKEND \
  --backend default/tls-backend:443=$TLSBACKEND --backend default/source:443=$SOURCE \
  "$tmp/manifests" >"$tmp/gwdev.log" 2>&1 & pids+=($!)

cat > "$tmp/nginx.conf" <<NGINX
${stream_mod:+load_module $stream_mod;}
worker_processes 2;
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  upstream api { server $BACKEND; keepalive 128; }
  server {
    listen $NGINX_HTTPS ssl http2;
    ssl_certificate $tmp/server.crt;
    ssl_certificate_key $tmp/server.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    server_name api.example.com;
    location /api {
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
      proxy_pass http://api;
    }
    location / { return 404; }
  }
}
stream {
  map \$ssl_preread_server_name \$up { stream.example.com $SOURCE; default $TLSBACKEND; }
  server { listen $NGINX_PASS; ssl_preread on; proxy_pass \$up; }
}
NGINX
nginx -c "$tmp/nginx.conf" -g 'daemon off;' & pids+=($!)

cat > "$tmp/haproxy.cfg" <<HAP
global
  nbthread 2
defaults
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend https
  mode http
  option http-keep-alive
  bind $HAPROXY_HTTPS ssl crt $tmp/server.pem alpn h2,http/1.1
  acl host_api hdr(host) -i api.example.com
  acl path_api path_beg /api
  use_backend api if host_api path_api
backend api
  mode http
  http-reuse always
  server s1 $BACKEND
frontend pass
  mode tcp
  bind $HAPROXY_PASS
  tcp-request inspect-delay 5s
  tcp-request content accept if { req_ssl_hello_type 1 }
  use_backend source if { req.ssl_sni -i stream.example.com }
  default_backend tlsbackend
backend tlsbackend
  mode tcp
  server s1 $TLSBACKEND
backend source
  mode tcp
  server s1 $SOURCE
HAP
haproxy -f "$tmp/haproxy.cfg" & pids+=($!)

# Wait for every side to answer.
# Passthrough clients connect to localhost: TLSRoutes need a hostname, and
# the SNI is the URL's host.
for url in https://$TLSBACKEND/ https://$GW_HTTPS/api/x https://$NGINX_HTTPS/api/x https://$HAPROXY_HTTPS/api/x \
           https://localhost:${GW_PASS##*:}/ https://localhost:${NGINX_PASS##*:}/ https://localhost:${HAPROXY_PASS##*:}/; do
  wait_200 "$url" -k -H 'Host: api.example.com'
done

run() { local name=$1 url=$2; shift 2; wrk_run "$name" 22 "$url" "$@"; } # name url [wrk args]
echo "wrk -t$threads -c$conns -d$dur on loopback, TLS 1.3, ECDSA P-256 ($(nproc) cores shared by client, proxy and backends)"
echo
echo "1. HTTPS termination → plain HTTP backend, 256-byte responses"
printf '%-22s %12s %10s %10s\n' side requests/s p50 p99
for side in "gwdev $GW_HTTPS" "nginx $NGINX_HTTPS" "haproxy $HAPROXY_HTTPS"; do
  set -- $side
  run "$1 new-conn" "https://$2/api/users" -H 'Connection: close'
done
for side in "gwdev $GW_HTTPS" "nginx $NGINX_HTTPS" "haproxy $HAPROXY_HTTPS"; do
  set -- $side
  run "$1 keep-alive" "https://$2/api/users"
done
echo
echo "2. TLS passthrough by SNI → HTTPS backend (handshake end to end, new connection per request)"
printf '%-22s %12s %10s %10s\n' side requests/s p50 p99
for side in "direct $TLSBACKEND" "gwdev $GW_PASS" "nginx $NGINX_PASS" "haproxy $HAPROXY_PASS"; do
  set -- $side
  run "$1 new-conn" "https://localhost:${2##*:}/" -H 'Connection: close'
done
echo
echo "3. TLS passthrough stream throughput: 4 connections × 256 MiB from a TLS source"
for side in "direct $SOURCE" "gwdev $GW_PASS" "nginx $NGINX_PASS" "haproxy $HAPROXY_PASS"; do
  set -- $side
  printf '%-22s ' "$1"
  "$tmp/tlsbench" stream -addr "$2" -sni stream.example.com -conns 4 -bytes $((256 << 20))
done
