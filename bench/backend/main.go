// Command backend is the upstream for proxy benchmarks: it answers every
// request with a small fixed body, like a typical JSON API response.
package main

import (
	"flag"
	"log"
	"net/http"
	"strconv"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18080", "listen address")
	size := flag.Int("size", 256, "response body size in bytes")
	flag.Parse()
	body := make([]byte, *size)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
	log.Fatal(http.ListenAndServe(*addr, h))
}
