package main

import (
	"regexp"
	"testing"
)

// TestCommandsTakeTheFolderAlike: every command reading a folder takes it
// as DIR and as --dir (-d), with the same result; two different folders
// are a usage error.
func TestCommandsTakeTheFolderAlike(t *testing.T) {
	const dir = "../../samples/basic"
	url := "http://app.example.com:8080/api/users"
	for _, c := range []struct{ positional, flag, short []string }{
		{[]string{"check", dir}, []string{"check", "--dir", dir}, []string{"check", "-d", dir}},
		{[]string{"graph", dir}, []string{"graph", "--dir", dir}, []string{"graph", "-d", dir}},
		{[]string{"explain", dir, url}, []string{"explain", "--dir", dir, url}, []string{"explain", "-d", dir, url}},
	} {
		want, _, code := runGwdev(t, "", c.positional...)
		for _, args := range [][]string{c.flag, c.short} {
			got, errOut, code2 := runGwdev(t, "", args...)
			if code2 != code || stripTimings(got) != stripTimings(want) {
				t.Errorf("%v: exit %d (want %d), output differs from %v: %s\n%s\nwant\n%s", args, code2, code, c.positional, errOut, got, want)
			}
		}
	}
	for _, args := range [][]string{
		{"check", "--dir", dir, "../../samples/https"},
		{"graph", "-d", dir, "../../samples/https"},
		{"explain", "--dir", dir, "../../samples/https", url},
		{"certs", "--dir", dir, "../../samples/https"},
		{"up", "--dir", dir, "../../samples/https"},
	} {
		if _, errOut, code := runGwdev(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errOut)
		}
	}
}

// stripTimings drops check's "Loaded … in 12ms; translated in 3µs." line,
// which differs from run to run.
func stripTimings(s string) string {
	return loadedLine.ReplaceAllString(s, "Loaded …")
}

var loadedLine = regexp.MustCompile(`(?m)^Loaded .*$`)
