package trust

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTrustIsKeyedByRealPathAndConfig: a grant trusts the folder (by its
// real path, through a symlink too) with the gwdev.yaml it had; another
// gwdev.yaml, another folder or a revoke trusts nothing; the record lives
// where GWDEV_CONFIG_DIR says, outside the folder.
func TestTrustIsKeyedByRealPathAndConfig(t *testing.T) {
	cfgDir := t.TempDir()
	t.Setenv(EnvDir, cfgDir)
	s, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	if s.Path() != filepath.Join(cfgDir, "trusted.json") {
		t.Fatalf("record at %s, want in %s", s.Path(), cfgDir)
	}
	dir, other := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	cfg := []byte("render: [{command: make}]\n")
	if ok, err := s.Trusted(dir, cfg); ok || err != nil {
		t.Fatalf("before any grant: %v %v", ok, err)
	}
	if _, err := s.Grant(link, cfg); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		cfg  []byte
		want bool
	}{
		{dir, cfg, true}, {link, cfg, true},
		{dir, []byte("render: [{command: make evil}]\n"), false}, {dir, nil, false}, {other, cfg, false},
	} {
		if ok, err := s.Trusted(tc.dir, tc.cfg); ok != tc.want || err != nil {
			t.Errorf("Trusted(%s, %q) = %v, %v; want %v", tc.dir, tc.cfg, ok, err, tc.want)
		}
	}
	if fs, err := s.List(); err != nil || len(fs) != 1 || fs[0].ConfigSum != ConfigSum(cfg) {
		t.Fatalf("List = %v, %v", fs, err)
	}
	// A new grant replaces the folder's entry.
	if _, err := s.Grant(dir, nil); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Trusted(dir, cfg); ok {
		t.Error("the old gwdev.yaml is still trusted after a new grant")
	}
	if removed, err := s.Revoke(link); !removed || err != nil {
		t.Fatalf("Revoke = %v, %v", removed, err)
	}
	if ok, _ := s.Trusted(dir, nil); ok {
		t.Error("trusted after revoke")
	}
	if fi, err := os.Stat(s.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("record %v %v; want mode 0600", fi, err)
	}
}
