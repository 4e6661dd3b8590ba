package main

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gwdev/gwdev/emulator/admin"
	"github.com/gwdev/gwdev/engine"
)

// adminObjects serves the admin API's /status: every object of the last
// translation with its computed status, as `gwdev check -o yaml` (default)
// or `-o json` (?format=json) prints it. The emulator serves the rest of the
// admin API; the objects are the engine's, so they are wired here.
type adminObjects struct {
	res atomic.Pointer[engine.Result]
}

var _ http.Handler = (*adminObjects)(nil)

func (a *adminObjects) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res := a.res.Load()
	if res == nil {
		http.Error(w, "no translation yet", http.StatusServiceUnavailable)
		return
	}
	if r.URL.Query().Get("format") == "json" {
		items, err := res.ObjectsJSONItems()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
		return
	}
	b, err := res.ObjectsYAML()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(b)
}

// adminReload is what the admin API shows of one translation: object and
// finding counts for metrics (manifests that failed to load count as
// errors) and the findings for /routes.
func adminReload(res *engine.Result, loadProblems int, at time.Time, translate, apply time.Duration) *admin.Reload {
	counts := map[string]int{string(engine.SeverityError): loadProblems, string(engine.SeverityWarning): 0, string(engine.SeverityInfo): 0}
	for _, f := range res.Findings {
		counts[string(f.Severity)]++
	}
	return &admin.Reload{Time: at, Translate: translate, Apply: apply, Objects: res.Objects.Len(),
		Findings: counts, FindingList: res.Findings}
}
