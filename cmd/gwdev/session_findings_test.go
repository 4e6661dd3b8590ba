package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/emulator/admin"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/tui"
)

// TestSessionFindingsAgree: for every sample, the findings `gwdev check -o
// json` prints (from its one-shot State, app.Once) are those the Session
// publishes; the dashboard (sent the State itself) counts the Session's
// errors and warnings in its header; the admin API (/routes' findings, fed
// by app.AdminStatus) shows exactly the Session's, and its /status serves
// the objects with the status check -o json prints. One pipeline, read by
// every front end.
func TestSessionFindingsAgree(t *testing.T) {
	dirs, _ := filepath.Glob("../../samples/*")
	n := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			out, _, _ := runGwdev(t, "", "check", "-o", "json", dir)
			var rep struct {
				Items    []any
				Findings []report.Finding
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("check -o json: %v\n%s", err, out)
			}
			var fromCheck []string
			for _, f := range rep.Findings {
				if f.Code != report.CodeLoadError { // load problems: compared below, from the loader
					fromCheck = append(fromCheck, findingKey(f.Severity, f.Object, f.Message))
				}
			}

			st := sessionState(t, dir)
			fromSession := findingKeys(st.Result.Findings)
			if !slices.Equal(fromCheck, fromSession) {
				t.Errorf("check -o json and the Session differ:\ncheck:   %q\nsession: %q", fromCheck, fromSession)
			}
			// check's State: the one-shot Session it prints from.
			once, err := app.Once([]string{dir}, project.Flags{}, app.OnceOptions{Where: dir})
			if err != nil {
				t.Fatal(err)
			}
			if got := findingKeys(once.Result.Findings); !slices.Equal(got, fromSession) || once.LoadProblems() != st.LoadProblems() {
				t.Errorf("the one-shot State's findings differ from the Session's:\nonce:    %q\nsession: %q", got, fromSession)
			}
			loadErrs := 0
			for _, f := range rep.Findings {
				if f.Code == report.CodeLoadError {
					loadErrs++
				}
			}
			if loadErrs != st.LoadProblems() {
				t.Errorf("check has %d load errors, the Session %d", loadErrs, st.LoadProblems())
			}

			// The dashboard: it is sent the Session's State itself; its header
			// counts what it made of it.
			model := tui.New(tui.Options{Dir: dir, NoColor: true})
			model.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
			model.Update(st)
			errs, warns := st.LoadProblems(), len(st.Update.Stale)
			for _, f := range st.Result.Findings {
				switch f.Severity {
				case engine.SeverityError:
					errs++
				case engine.SeverityWarning:
					warns++
				}
			}
			header := strings.SplitN(model.View(), "\n", 2)[0]
			for n, word := range map[int]string{errs: "error", warns: "warning"} {
				if want := report.Plural(n, word); n > 0 && !strings.Contains(header, want) {
					t.Errorf("the dashboard's header lacks %q (the Session's): %s", want, header)
				}
			}
			if errs+warns == 0 && !strings.Contains(header, "no problems") {
				t.Errorf("the dashboard's header: %s, the Session has no problems", header)
			}

			// The admin API.
			srv := emulator.New(emulator.Config{})
			t.Cleanup(func() { _ = srv.Close(context.Background()) })
			status := &app.AdminStatus{}
			status.Admin = admin.New(srv, status)
			status.Publish(st)
			addr, _, err := admin.Serve(t.Context(), "127.0.0.1:0", status.Admin, admin.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var routes struct{ Findings []engine.Finding }
			getJSON(t, "http://"+addr.String()+"/routes", &routes)
			if got := findingKeys(routes.Findings); !slices.Equal(got, fromSession) {
				t.Errorf("the admin API's findings differ from the Session's:\nadmin:   %q\nsession: %q", got, fromSession)
			}
			var served struct{ Items []any }
			getJSON(t, "http://"+addr.String()+"/status?format=json", &served)
			if len(served.Items) == 0 || !reflect.DeepEqual(withoutTimes(served.Items), withoutTimes(rep.Items)) {
				t.Errorf("the admin API's /status (%d objects) differs from check -o json's (%d)", len(served.Items), len(rep.Items))
			}
		})
	}
	if n < 5 {
		t.Fatalf("only %d samples: is the test running in cmd/gwdev?", n)
	}
}

// sessionState is the first State of a Session serving dir.
func sessionState(t *testing.T, dir string) *app.State {
	t.Helper()
	proj, err := project.Open([]string{dir}, project.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	srv := emulator.New(emulator.Config{})
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	sess, err := app.NewSession(t.Context(), proj, app.SessionOptions{Dir: dir, Server: srv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.Close)
	sess.Start()
	return sess.State()
}

func findingKeys(fs []engine.Finding) []string {
	var out []string
	for _, f := range fs {
		o := f.Object
		var op *engine.ObjectKey
		if o != (engine.ObjectKey{}) {
			op = &o
		}
		out = append(out, findingKey(string(f.Severity), op, f.Message))
	}
	return out
}

func findingKey(severity string, o *engine.ObjectKey, message string) string {
	obj := ""
	if o != nil {
		obj = o.String()
	}
	return fmt.Sprintf("%s %s: %s", severity, obj, message)
}

// getJSON decodes the JSON answer to GET url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

// withoutTimes is v (decoded JSON) without lastTransitionTime fields: check
// and the Session translate at their own second.
func withoutTimes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "lastTransitionTime" {
				out[k] = withoutTimes(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutTimes(e)
		}
		return out
	}
	return v
}
