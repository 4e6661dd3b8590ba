package tui

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/gwdev/gwdev/emulator"
)

// The dashboard's trace detail and its copy-as-curl show a real request's
// trace without the credentials it carried.
func TestTraceDetailAndCurlRedactCredentials(t *testing.T) {
	srv, url := echoGateway(t)
	sub := srv.SubscribeTraces(4)
	defer sub.Cancel()
	req, _ := http.NewRequest("GET", url+"/x?X-Amz-Signature=AMZ1&jwt=JWT2&page=2", nil)
	req.Header.Set("X-Api-Key", "APIKEY3")
	req.Header.Set("X-Auth-Token", "AUTHTOK4")
	req.Header.Set("Cookie", "sid=COOKIE5")
	req.Header.Set("X-Keep", "kept")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	batch, _ := sub.Next(ctx, 0, nil)
	if len(batch) == 0 {
		t.Fatal("no trace")
	}
	tr := batch[0]
	detail := strings.Join(traceDetail(newStyles(lipgloss.NewRenderer(io.Discard), true), tr, 120), "\n")
	curl, left, err := commandLine(tr)
	if err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]string{"detail": detail, "curl": curl} {
		for _, s := range []string{"AMZ1", "JWT2", "APIKEY3", "AUTHTOK4", "COOKIE5"} {
			if strings.Contains(out, s) {
				t.Errorf("%s leaks %s:\n%s", what, s, out)
			}
		}
	}
	if left != 3 || !strings.Contains(curl, "X-Keep: kept") || !strings.Contains(curl, "page=2") ||
		!strings.Contains(detail, "X-Api-Key: "+emulator.Redacted) {
		t.Errorf("%d left out; curl %s\ndetail:\n%s", left, curl, detail)
	}
}
