package emulator

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/gwdev/gwdev/emulator/h1"
)

// TestRecordOwnedStoresWhatRecordStores: a trace recorded in place
// (recordOwned, the lane's exchanges) is stored and queued redacted as
// record stores and queues a copy of it, the caller's copy left alone.
func TestRecordOwnedStoresWhatRecordStores(t *testing.T) {
	mk := func() Trace {
		return Trace{Host: "api.example.com", Method: "GET", Path: "/login?token=abc&x=1",
			Filters: []string{"RequestRedirect: https://u:pw@h.example/p?code=1"}, Status: 200,
			RequestHeaders: http.Header{"Authorization": {"Bearer secret"}, "Accept": {"*/*"}},
			responseFields: []h1.Field{{Name: "Set-Cookie", Value: "s=1"}, {Name: "Content-Length", Value: "2"}},
			memo:           &headerMemo{}}
	}
	byValue, owned := newTraceRing(4, 1<<20), newTraceRing(4, 1<<20)
	subV, cancelV := byValue.subscribe(4, 0)
	defer cancelV()
	subO, cancelO := owned.subscribe(4, 0)
	defer cancelO()
	kept := mk()
	byValue.record(kept)
	want := mk()
	want.memo = kept.memo
	if !reflect.DeepEqual(kept, want) {
		t.Fatalf("record changed its caller's trace: %+v", kept)
	}
	tr := mk()
	owned.recordOwned(&tr)
	if got, want := owned.buf[0], byValue.buf[0]; !reflect.DeepEqual(got, want) {
		t.Fatalf("recordOwned stored\n%+v\nrecord stored\n%+v", got, want)
	}
	if got, want := subO.queue, subV.queue; !reflect.DeepEqual(got, want) {
		t.Fatalf("recordOwned queued\n%+v\nrecord queued\n%+v", got, want)
	}
	if owned.buf[0].Path == mk().Path || owned.buf[0].RequestHeaders.Get("Authorization") == "Bearer secret" {
		t.Fatalf("stored trace not redacted: %+v", owned.buf[0])
	}
}
