// Command tlsbench is the TLS side of the proxy benchmarks (bench/tls.sh):
//
//	tlsbench certs DIR                      a CA, a server certificate for *.example.com
//	                                        (PEM files, a haproxy bundle, a gwdev Secret)
//	tlsbench backend -addr A -cert C -key K an HTTPS backend answering 256 bytes
//	tlsbench source -addr A -cert C -key K  a TLS server that sends -bytes per connection
//	tlsbench stream -addr A -sni S          downloads -bytes over -conns TLS connections
//	                                        through A and prints the throughput
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: tlsbench certs|backend|source|stream ...")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:18443", "listen or connect address")
	cert := fs.String("cert", "server.crt", "certificate PEM")
	key := fs.String("key", "server.key", "key PEM")
	size := fs.Int("size", 256, "HTTP response body size (backend)")
	n := fs.Int64("bytes", 256<<20, "bytes per connection (source, stream)")
	conns := fs.Int("conns", 4, "parallel connections (stream)")
	sni := fs.String("sni", "stream.example.com", "server name (stream)")
	_ = fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "certs":
		certs(fs.Arg(0))
	case "backend":
		backend(*addr, *cert, *key, *size)
	case "source":
		source(*addr, *cert, *key, *n)
	case "stream":
		stream(*addr, *sni, *n, *conns)
	default:
		log.Fatalf("unknown command %q", os.Args[1])
	}
}

func certs(dir string) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caT := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tlsbench CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caT, caT, &caKey.PublicKey, caKey)
	check(err)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	t := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "*.example.com"},
		DNSNames: []string{"*.example.com", "localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, t, caT, &k.PublicKey, caKey)
	check(err)
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	check(err)
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
	write := func(name string, data []byte) { check(os.WriteFile(filepath.Join(dir, name), data, 0o600)) }
	write("ca.crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	write("server.crt", crt)
	write("server.key", keyPEM)
	write("server.pem", append(append([]byte{}, crt...), keyPEM...)) // haproxy
	b := base64.StdEncoding.EncodeToString
	write("secret.yaml", fmt.Appendf(nil, "apiVersion: v1\nkind: Secret\nmetadata: {name: bench-tls}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: %s\n  tls.key: %s\n", b(crt), b(keyPEM)))
}

func serverConfig(cert, key string) *tls.Config {
	pair, err := tls.LoadX509KeyPair(cert, key)
	check(err)
	return &tls.Config{Certificates: []tls.Certificate{pair}}
}

func backend(addr, cert, key string, size int) {
	body := make([]byte, size)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	srv := &http.Server{Addr: addr, TLSConfig: serverConfig(cert, key), ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})}
	log.Fatal(srv.ListenAndServeTLS("", ""))
}

func source(addr, cert, key string, n int64) {
	ln, err := tls.Listen("tcp", addr, serverConfig(cert, key))
	check(err)
	buf := make([]byte, 64<<10)
	for {
		c, err := ln.Accept()
		check(err)
		go func() {
			defer c.Close()
			for left := n; left > 0; {
				w, err := c.Write(buf[:min(int64(len(buf)), left)])
				if err != nil {
					return
				}
				left -= int64(w)
			}
		}()
	}
}

func stream(addr, sni string, n int64, conns int) {
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total int64
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := tls.Dial("tcp", addr, &tls.Config{ServerName: sni, InsecureSkipVerify: true})
			check(err)
			defer c.Close()
			got, err := io.Copy(io.Discard, c)
			check(err)
			mu.Lock()
			total += got
			mu.Unlock()
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if total != n*int64(conns) {
		log.Fatalf("received %d bytes, want %d", total, n*int64(conns))
	}
	fmt.Printf("%.0f MB/s (%d MiB over %d connections in %s)\n", float64(total)/d.Seconds()/1e6, total>>20, conns, d.Round(time.Millisecond))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
