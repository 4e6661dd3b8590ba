// Command client calls the Gateway API conformance echo service
// (gateway_api_conformance.echo_basic.grpcecho.GrpcEcho) through a gateway
// over h2c, the way grpcurl -plaintext would, and prints which backend
// answered, with the metadata it saw and the response metadata.
//
//	go run ./samples/grpc/client -addr 127.0.0.1:9090 -method EchoTwo -n 20
//	go run ./samples/grpc/client -H x-canary=true
//	go run ./samples/grpc/client -service foo.Bar   # no route: UNIMPLEMENTED from the gateway
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"
)

// headerFlags collects repeated -H name=value flags.
type headerFlags []string

func (h *headerFlags) String() string { return strings.Join(*h, ",") }

func (h *headerFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want name=value, got %q", v)
	}
	*h = append(*h, strings.ToLower(k), val)
	return nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "gateway address (host:port of an HTTP listener)")
	authority := flag.String("authority", "grpc.example.com", "the :authority (host) to send")
	service := flag.String("service", "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho", "full service name")
	method := flag.String("method", "Echo", "method: Echo, EchoTwo or EchoThree (unimplemented by the echo)")
	n := flag.Int("n", 1, "number of calls; with more than one, only a tally of backends is printed")
	var headers headerFlags
	flag.Var(&headers, "H", "request metadata name=value (repeatable)")
	flag.Parse()

	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(*authority))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer conn.Close()
	full := "/" + *service + "/" + *method
	tally := map[string]int{}
	for i := 0; i < *n; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ctx = metadata.AppendToOutgoingContext(ctx, headers...)
		var hdr metadata.MD
		resp := &pb.EchoResponse{}
		err := conn.Invoke(ctx, full, &pb.EchoRequest{}, resp, grpc.Header(&hdr))
		cancel()
		if err != nil {
			st := status.Convert(err)
			tally[st.Code().String()]++
			if *n == 1 {
				fmt.Printf("%s: %s: %s\n", full, st.Code(), st.Message())
				os.Exit(1)
			}
			continue
		}
		c := resp.GetAssertions().GetContext()
		tally[c.GetServiceName()]++
		if *n == 1 {
			printEcho(full, resp, hdr)
		}
	}
	if *n > 1 {
		keys := make([]string, 0, len(tally))
		for k := range tally {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Printf("%-20s %d\n", k, tally[k])
		}
	}
}

func printEcho(full string, resp *pb.EchoResponse, hdr metadata.MD) {
	a := resp.GetAssertions()
	c := a.GetContext()
	fmt.Printf("%s answered by %s/%s (pod %s) through %s\n", full, c.GetNamespace(), c.GetServiceName(), c.GetPod(), c.GetIngress())
	fmt.Printf("  method %s, authority %s\n", a.GetFullyQualifiedMethod(), a.GetAuthority())
	fmt.Println("  metadata the backend received:")
	for _, h := range a.GetHeaders() {
		fmt.Printf("    %s: %s\n", h.GetKey(), h.GetValue())
	}
	fmt.Println("  response metadata:")
	keys := make([]string, 0, len(hdr))
	for k := range hdr {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("    %s: %s\n", k, strings.Join(hdr[k], ", "))
	}
}
