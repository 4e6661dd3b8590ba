package emulator

import (
	"fmt"
	"net"
	"net/http"
	"strconv"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/engine/table"
)

// podEchoes are the endpoints of a pods target (an XBackend of type
// EndpointSelector): one built-in echo backend per selected Pod, answering
// as that Pod. Each Pod has an address of its own in the upstream's addrs
// ("<pod>.<namespace>.pod:<port>", never dialled), so round robin, session
// pinning, retries and traces treat the Pods as the endpoints they are;
// the request's URL host says which Pod answers.
type podEchoes struct {
	byAddr map[string]*echosrv.Target
}

var _ http.RoundTripper = (*podEchoes)(nil)

// newPodEchoes makes the echo of every Pod of b's target, in table order,
// with the address each answers on.
func newPodEchoes(b *table.Backend, echoLog func(string) *echosrv.Log) ([]string, *podEchoes) {
	pe := &podEchoes{byAddr: make(map[string]*echosrv.Target, len(b.Target.Pods))}
	addrs := make([]string, 0, len(b.Target.Pods))
	for _, pod := range b.Target.Pods {
		one, target := *b, *b.Target
		target.Pods = []string{pod} // the echo answers as this Pod (echo.go)
		one.Target = &target
		addr := podAddress(pod, b.Service.Namespace, b.Port)
		addrs = append(addrs, addr)
		pe.byAddr[addr] = echosrv.NewTarget(&one, echoLog, requestIngress)
	}
	return addrs, pe
}

// podAddress is the address a Pod's echo answers on in traces and URLs.
func podAddress(pod, namespace string, port int32) string {
	return net.JoinHostPort(pod+"."+namespace+".pod", strconv.Itoa(int(port)))
}

// RoundTrip answers req with the echo of the Pod its URL names.
func (pe *podEchoes) RoundTrip(req *http.Request) (*http.Response, error) {
	e := pe.byAddr[req.URL.Host]
	if e == nil {
		return nil, fmt.Errorf("no selected Pod answers on %s", req.URL.Host)
	}
	return e.RoundTrip(req)
}

// podOf names the Pod of endpoint idx of a pods target ("" : none).
func podOf(b *table.Backend, idx int) string {
	if b.Target == nil || b.Target.Kind != table.TargetPods || idx < 0 || idx >= len(b.Target.Pods) {
		return ""
	}
	return b.Target.Pods[idx]
}
