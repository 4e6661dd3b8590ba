package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/tui"
	"github.com/gwdev/gwdev/watch"
)

// TestCheckAndUpCountObjectsAlike: for every sample, `gwdev check`, the
// plain output of `gwdev up` and the dashboard's header count the same
// objects.
func TestCheckAndUpCountObjectsAlike(t *testing.T) {
	dirs, _ := filepath.Glob("../../samples/*")
	loadedRe := regexp.MustCompile(`Loaded (\d+) objects?`)
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		out, _, _ := runGwdev(t, "", "check", dir)
		m := loadedRe.FindStringSubmatch(out)
		if m == nil {
			t.Errorf("%s: check says %q", dir, out)
			continue
		}
		loader, err := project.NewLoader(nil)
		if err != nil {
			t.Fatal(err)
		}
		w, err := loader.Watch(t.Context(), dir, watch.WatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u := w.Current()
		res := engine.TranslateNext(nil, u.Result.Snapshot, engine.Options{Now: metav1.NewTime(time.Now())})
		if got := fmt.Sprint(res.Objects.Len()); got != m[1] {
			t.Errorf("%s: check loaded %s objects, up %s", dir, m[1], got)
		}
		model := tui.New(tui.Options{Dir: dir, NoColor: true})
		model.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
		model.Update(&app.State{Update: u, Result: res, Ports: &emulator.ApplyReport{}, Time: time.Now()})
		if v := model.View(); !strings.Contains(v, " "+m[1]+" objects") {
			t.Errorf("%s: check loaded %s objects; the dashboard header says:\n%s", dir, m[1], strings.SplitN(v, "\n", 2)[0])
		}
	}
}
