// Package ingressnginx is the ingress-nginx front end: it serves the
// Ingresses of ingress-nginx classes as ingress-nginx configures nginx, and
// migrates them to Gateway API objects. It is a plug-in of the engine, as
// the gwin profile is: its init function registers [FrontEnd] with
// engine.RegisterFrontEnd, and the engine starts one run per translation
// with an engine.Translation, never with its translator.
//
// Files: classes.go (which Ingresses are served, their class addresses and
// status), nginx.go (servers, locations and their order: the routing
// table), annotations.go (the nginx.ingress.kubernetes.io/* annotations
// gwdev emulates or reports, and their parsing), features.go (the rule
// settings, gathered), one file per annotation family — auth.go (basic and
// external auth, source ranges), rewrite.go (redirects, rewrite-target,
// regex locations), canary.go, headers.go (custom-headers),
// cors_ratelimit.go, backend.go (the Service port, affinity, timeouts, body
// size), errors.go (custom-http-errors, default-backend) — migrate.go and
// migrate_features.go (Ingresses to Gateway API objects), nginxconf.go
// (the nginx.conf a differential test runs real nginx with).
// annotations_test.go guards the annotation lists against ingress-nginx's
// documentation.
package ingressnginx

import (
	"strconv"

	"github.com/gwdev/gwdev/engine"
)

func init() { engine.RegisterFrontEnd(FrontEnd{}) }

// FrontEnd is the ingress-nginx front end.
type FrontEnd struct{}

// Name is "ingress-nginx".
func (FrontEnd) Name() string { return "ingress-nginx" }

// Start begins the front end's part of one translation.
func (FrontEnd) Start(tr *engine.Translation) engine.FrontEndRun { return &translator{tr: tr} }

var _ engine.FrontEnd = FrontEnd{}

// translator is the front end's state during one translation.
type translator struct {
	tr *engine.Translation
	// ingressClasses are the classes gwdev serves as ingress-nginx, by
	// name (classes.go).
	ingressClasses []*ingressClass
}

// Process picks the served Ingresses and parses their annotations
// (classes.go).
func (t *translator) Process() { t.processIngresses() }

// Tables are the classes' routing tables (nginx.go).
func (t *translator) Tables() []*engine.GatewayTable { return t.ingressTables() }

func (t *translator) note(sev engine.Severity, k engine.ObjectKey, scope, msg string) {
	t.tr.Note(sev, k, scope, msg)
}

func (t *translator) noteKind(kind engine.NoteKind, sev engine.Severity, k engine.ObjectKey, scope, msg string) {
	t.tr.NoteKind(kind, sev, k, scope, msg)
}

func (t *translator) noteAt(kind engine.NoteKind, sev engine.Severity, k engine.ObjectKey, path, scope, msg string) {
	t.tr.NoteAt(kind, sev, k, path, scope, msg)
}

func (t *translator) source(k engine.ObjectKey) engine.Source { return t.tr.Source(k) }

func (t *translator) sourceAt(k engine.ObjectKey, path string) engine.Source {
	return t.tr.SourceAt(k, path)
}

// nsName is a namespace/name pair used as a map key.
type nsName struct{ ns, name string }

func itoa(n int) string { return strconv.Itoa(n) }
