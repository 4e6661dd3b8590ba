package main

import (
	"fmt"
	"io"
	"os/exec"
	"runtime"
)

// openWebView opens url (the web view) with the system's opener (open on
// macOS, xdg-open elsewhere), or says why it cannot.
func openWebView(out io.Writer, url string) {
	if url == "" {
		fmt.Fprintln(out, "gwdev: --open: the web view is not served (the admin API is off)")
		return
	}
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		fmt.Fprintf(out, "gwdev: --open: %s is not on PATH; open %s yourself\n", opener, url)
		return
	}
	cmd := exec.Command(path, url)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(out, "gwdev: --open: %s %s: %v\n", opener, url, err)
		return
	}
	go func() { _ = cmd.Wait() }() // reap it; the browser outlives it
}
