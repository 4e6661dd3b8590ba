// Command relay is the floor of bench/proxy.sh: the least an HTTP/1.1
// proxy written in Go with a goroutine per connection can do. For each
// client connection it dials one upstream connection; for each request it
// copies the request head to the upstream unchanged, reads the response
// head, copies the body by its Content-Length and flushes. No routing, no
// header changes, no request bodies, no chunked answers, no traces: it
// only serves GET requests to a backend that answers with Content-Length
// (bench/backend), and is not a proxy anyone should use. What it costs per
// request is what gwdev's goroutine-per-connection design costs before any
// of gwdev's own work.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"log"
	"net"
	"strconv"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18085", "listen address")
	upstream := flag.String("upstream", "127.0.0.1:18080", "backend address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go relay(c, *upstream)
	}
}

// relay serves one client connection until either side closes or sends
// something it does not handle.
func relay(c net.Conn, upstream string) {
	defer c.Close()
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer u.Close()
	cr, cw := bufio.NewReader(c), bufio.NewWriter(c)
	ur, uw := bufio.NewReader(u), bufio.NewWriter(u)
	head := make([]byte, 0, 4096)
	for {
		var err error
		if head, _, err = readHead(cr, head); err != nil {
			return
		}
		if _, err = uw.Write(head); err != nil || uw.Flush() != nil {
			return
		}
		var n int64
		if head, n, err = readHead(ur, head); err != nil || n < 0 {
			return
		}
		if _, err = cw.Write(head); err != nil {
			return
		}
		if _, err = io.CopyN(cw, ur, n); err != nil || cw.Flush() != nil {
			return
		}
	}
}

var contentLength = []byte("content-length:")

// readHead reads a message head, through the empty line, into buf; n is
// its Content-Length (-1: none).
func readHead(r *bufio.Reader, buf []byte) (head []byte, n int64, err error) {
	head, n = buf[:0], -1
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return nil, 0, err
		}
		head = append(head, line...)
		if len(line) <= 2 {
			return head, n, nil
		}
		if len(line) > len(contentLength) && bytes.EqualFold(line[:len(contentLength)], contentLength) {
			if n, err = strconv.ParseInt(string(bytes.TrimSpace(line[len(contentLength):])), 10, 64); err != nil {
				return nil, 0, err
			}
		}
	}
}
