// Command reloadprobe measures edit-to-served latency against a running
// `gwdev up`: it saves a new HTTPRoute file into the watched folder the way
// editors do (write a dotfile, rename it into place), then sends requests
// with the new route's Host until one is answered 200, and prints the time
// from the rename to that answer for every save, then the median and max.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"
)

func main() {
	dir := flag.String("dir", "", "the folder gwdev up watches")
	addr := flag.String("addr", "", "the listener's host:port")
	saves := flag.Int("saves", 7, "number of saves")
	ns := flag.String("namespace", "team-0", "namespace of the new routes")
	gateway := flag.String("gateway", "infra/shared", "parent Gateway namespace/name")
	tag := flag.String("tag", "probe", "prefix of the new routes' names (unique per run)")
	pause := flag.Duration("pause", 300*time.Millisecond, "quiet time before each save")
	flag.Parse()
	if *dir == "" || *addr == "" {
		log.Fatal("-dir and -addr are required")
	}
	gwNS, gwName := filepath.Split(*gateway)
	gwNS = filepath.Clean(gwNS)
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	var took []time.Duration
	for i := range *saves {
		time.Sleep(*pause)
		name := fmt.Sprintf("%s-%d", *tag, i)
		host := name + ".example.com"
		doc := fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s, namespace: %s}
spec:
  parentRefs: [{name: %s, namespace: %s}]
  hostnames: [%s]
  rules:
  - backendRefs: [{name: app-0, port: 8080}]
`, name, *ns, gwName, gwNS, host)
		tmp := filepath.Join(*dir, "."+name+".yaml.tmp")
		if err := os.WriteFile(tmp, []byte(doc), 0o644); err != nil {
			log.Fatal(err)
		}
		if code := get(client, *addr, host); code == 200 {
			log.Fatalf("%s answers 200 before it is saved", host)
		}
		start := time.Now()
		if err := os.Rename(tmp, filepath.Join(*dir, name+".yaml")); err != nil {
			log.Fatal(err)
		}
		for get(client, *addr, host) != 200 {
			if time.Since(start) > 10*time.Second {
				log.Fatalf("%s: no 200 within 10s of the save", host)
			}
			time.Sleep(200 * time.Microsecond)
		}
		took = append(took, time.Since(start))
	}
	for _, d := range took {
		fmt.Printf("save %.1fms\n", ms(d))
	}
	slices.Sort(took)
	fmt.Printf("median %.1fms max %.1fms\n", ms(took[len(took)/2]), ms(took[len(took)-1]))
}

// get returns the status of GET / with Host host (0 on a transport error).
func get(c *http.Client, addr, host string) int {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		log.Fatal(err)
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
