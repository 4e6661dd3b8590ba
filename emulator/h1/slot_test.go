package h1

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestReleasedRequestServesTheNextRequest: the request of a handler that
// released its writer (its header map and URL with it) is the next
// request's on the connection, holding only what that request sent (no
// field, value, URL or ended context of the last); one not released is not
// taken again, and keeps what it held and its ended context.
func TestReleasedRequestServesTheNextRequest(t *testing.T) {
	type seen struct {
		r                *http.Request
		header           uintptr
		path, a, b, host string
		ctxErr           error
		ctx              context.Context
	}
	var got []seen
	f := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, seen{r: r, header: reflect.ValueOf(r.Header).Pointer(), path: r.URL.Path,
			a: r.Header.Get("X-A"), b: r.Header.Get("X-B"), host: r.Host, ctxErr: r.Context().Err(), ctx: r.Context()})
		_, _ = io.WriteString(w, "ok")
		if r.URL.Path != "/kept" {
			w.(*ResponseWriter).Release()
		}
	}), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	_, _, ask := pipeServe(t, f)
	ask("GET /first HTTP/1.1\r\nHost: one\r\nX-A: 1\r\nX-A: 2\r\n\r\n")
	ask("GET /kept HTTP/1.1\r\nHost: two\r\nX-B: 3\r\n\r\n")
	kept := *got[1].r
	ask("GET /next HTTP/1.1\r\nHost: three\r\n\r\n")
	ask("GET /last?q=1 HTTP/1.1\r\nHost: four\r\nX-A: 4\r\n\r\n")
	want := []seen{{path: "/first", a: "1", host: "one"}, {path: "/kept", b: "3", host: "two"},
		{path: "/next", host: "three"}, {path: "/last", a: "4", host: "four"}}
	for i := range want {
		g := got[i]
		if g.path != want[i].path || g.a != want[i].a || g.b != want[i].b || g.host != want[i].host || g.ctxErr != nil {
			t.Errorf("request %d saw path %q, X-A %q, X-B %q, host %q, context %v; want %+v", i+1, g.path, g.a, g.b, g.host, g.ctxErr, want[i])
		}
	}
	if got[1].r != got[0].r || got[1].header != got[0].header {
		t.Error("the released first request's slot did not serve the second")
	}
	if got[2].r == got[1].r || got[2].header == got[1].header {
		t.Error("the second request, not released, served the third")
	}
	if got[3].r != got[2].r || got[3].header != got[2].header {
		t.Error("the released third request's slot did not serve the fourth")
	}
	if r := got[1].r; !reflect.DeepEqual(*r, kept) || r.Header.Get("X-B") != "3" || r.Context().Err() != context.Canceled {
		t.Errorf("the request not released changed after its end: %+v, context %v", r, r.Context().Err())
	}
	if got[1].ctx != got[0].ctx || got[3].ctx != got[2].ctx || got[2].ctx == got[1].ctx {
		t.Error("the contexts are not the slots': a released request's serves the next, one not released does not")
	}
}

// TestFastRequestContextEndsWithTheRequest: what is derived from a fast
// request's context (through wrappers of other types that pass on its
// values, as the emulator's exchange context does) ends with the request,
// at once, as with a context of the context package: no goroutine waits
// for it. A slot's context made new for the next request is not ended,
// and what was derived before stays ended.
func TestFastRequestContextEndsWithTheRequest(t *testing.T) {
	type key struct{}
	s := newReqSlot(context.Background())
	ctx := s.ctx
	if ctx.Err() != nil {
		t.Fatal("a new request's context has ended")
	}
	early := ctx.Done()
	child, stopChild := context.WithCancel(context.WithValue(wrappedCtx{ctx}, key{}, 1))
	defer stopChild()
	ran := make(chan struct{})
	context.AfterFunc(wrappedCtx{ctx}, func() { close(ran) })
	s.cancel()
	if child.Err() != context.Canceled {
		t.Fatalf("a derived context was not ended by the request's end (%v): a goroutine would end it later", child.Err())
	}
	for name, c := range map[string]<-chan struct{}{"asked before": early, "asked after": ctx.Done()} {
		select {
		case <-c:
		default:
			t.Errorf("the Done channel %s the end is open", name)
		}
	}
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("context.AfterFunc's function did not run")
	}
	if ctx.Err() != context.Canceled || context.Cause(ctx) != context.Canceled {
		t.Fatalf("ended context: Err %v, Cause %v", ctx.Err(), context.Cause(ctx))
	}
	s.reset()
	if ctx.Err() != nil {
		t.Fatal("the slot's next request starts with an ended context")
	}
	select {
	case <-ctx.Done():
		t.Fatal("the slot's next request's Done channel is closed")
	default:
	}
	if child.Err() != context.Canceled {
		t.Fatal("a context derived from the last request came back to life")
	}
	late, stopLate := context.WithCancel(ctx)
	defer stopLate()
	s.cancel()
	if late.Err() != context.Canceled {
		t.Fatal("the next request's end did not end what was derived from it")
	}
	// A context that ended before anyone asked for its channel.
	s.reset()
	s.cancel()
	select {
	case <-ctx.Done():
	default:
		t.Fatal("the channel of a context that ended unasked is open")
	}
	// A connection context that may end: each slot's context is the
	// context package's, ended by the connection's too.
	parent, stopParent := context.WithCancel(context.Background())
	p := newReqSlot(parent)
	if p.reusable() {
		t.Fatal("a slot under a connection context that may end is reusable")
	}
	stopParent()
	if p.ctx.Err() != context.Canceled {
		t.Fatal("the connection's end did not end its request's context")
	}
}

// wrappedCtx is a context of another type that passes the values on, as
// the emulator's exchange context does.
type wrappedCtx struct{ context.Context }
