package project

import (
	"context"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ConfigRetry is how often the gwdev.yaml watch tries to watch a folder
// that is missing (removed, renamed away, not created yet).
const ConfigRetry = time.Second

// WatchConfig signals on the returned channel, debounced, every time
// gwdev.yaml or gwdev.yml in dir is created, written, renamed or removed.
// It watches the folder, not the file (editors save by rename); while the
// folder is missing it tries again every ConfigRetry and signals once it
// is watched again. It stops when ctx is done.
func WatchConfig(ctx context.Context, dir string, debounce time.Duration) <-chan struct{} {
	changed := make(chan struct{}, 1)
	go func() {
		fw, err := fsnotify.NewWatcher()
		if err != nil {
			return // no inotify: gwdev.yaml is read at start only
		}
		defer fw.Close()
		abs, _ := filepath.Abs(dir)
		watching := fw.Add(abs) == nil
		signal := func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
		var fire <-chan time.Time
		retry := time.NewTicker(ConfigRetry)
		defer retry.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				if ev.Name == abs && ev.Has(fsnotify.Remove|fsnotify.Rename) {
					_ = fw.Remove(abs)
					watching = false
					fire = time.After(debounce)
					continue
				}
				if slices.Contains(configNames, filepath.Base(ev.Name)) && filepath.Dir(ev.Name) == abs {
					fire = time.After(debounce)
				}
			case <-fw.Errors:
			case <-retry.C:
				if !watching && fw.Add(abs) == nil {
					watching = true
					fire = time.After(debounce)
				}
			case <-fire:
				fire = nil
				signal()
			}
		}
	}()
	return changed
}
