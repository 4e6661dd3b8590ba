// Package trust keeps the record of the folders whose gwdev.yaml the user
// allowed to make gwdev run commands (render:) and reach the network
// (kustomize remote resources), as direnv keeps the .envrc files it may
// load. The record lives outside every folder (the user's configuration
// folder), so a folder cannot trust itself; it is keyed by the folder's
// absolute real path and a hash of its gwdev.yaml, so that any change to
// gwdev.yaml (a pull request changing a command) voids the consent until
// the user gives it again.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// EnvDir is the environment variable that, when set, names the folder the
// record is kept in instead of the user's configuration folder (tests).
const EnvDir = "GWDEV_CONFIG_DIR"

// fileName is the record's file in its folder.
const fileName = "trusted.json"

// Folder is one folder the user trusts.
type Folder struct {
	// Dir is the folder's absolute path with symlinks resolved.
	Dir string `json:"dir"`
	// ConfigSum is "sha256:HEX" of its gwdev.yaml's content when the user
	// trusted it (the sum of nothing when it had none).
	ConfigSum string `json:"configSum"`
}

// record is the file's content.
type record struct {
	Folders []Folder `json:"folders"`
}

// Store is the trust record in a folder.
type Store struct {
	// path is the record's file.
	path string
}

// Open returns the record in $GWDEV_CONFIG_DIR, else in gwdev's folder of
// the user's configuration folder (os.UserConfigDir()/gwdev).
func Open() (*Store, error) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return nil, fmt.Errorf("finding the trust record: %w (set %s)", err, EnvDir)
		}
		dir = filepath.Join(base, "gwdev")
	}
	return &Store{path: filepath.Join(dir, fileName)}, nil
}

// Path is the record's file.
func (s *Store) Path() string { return s.path }

// ConfigSum is the hash a folder's consent is tied to: "sha256:HEX" of its
// gwdev.yaml's content (nil: it has none).
func ConfigSum(config []byte) string {
	sum := sha256.Sum256(config)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// RealDir is dir as the record keys it: absolute, symlinks resolved.
func RealDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	return real, nil
}

// Trusted reports whether the user trusts dir with the gwdev.yaml content
// config. A missing record trusts nothing.
func (s *Store) Trusted(dir string, config []byte) (bool, error) {
	real, err := RealDir(dir)
	if err != nil {
		return false, err
	}
	r, err := s.read()
	if err != nil {
		return false, err
	}
	sum := ConfigSum(config)
	return slices.ContainsFunc(r.Folders, func(f Folder) bool { return f.Dir == real && f.ConfigSum == sum }), nil
}

// Grant trusts dir with the gwdev.yaml content config, replacing what the
// record said about dir.
func (s *Store) Grant(dir string, config []byte) (Folder, error) {
	real, err := RealDir(dir)
	if err != nil {
		return Folder{}, err
	}
	f := Folder{Dir: real, ConfigSum: ConfigSum(config)}
	r, err := s.read()
	if err != nil {
		return Folder{}, err
	}
	r.Folders = slices.DeleteFunc(r.Folders, func(o Folder) bool { return o.Dir == real })
	r.Folders = append(r.Folders, f)
	return f, s.write(r)
}

// Revoke stops trusting dir; it reports whether the record trusted it.
// A folder that no longer exists is revoked by its absolute path.
func (s *Store) Revoke(dir string) (bool, error) {
	real, err := RealDir(dir)
	if err != nil {
		if real, err = filepath.Abs(dir); err != nil {
			return false, err
		}
	}
	r, err := s.read()
	if err != nil {
		return false, err
	}
	n := len(r.Folders)
	r.Folders = slices.DeleteFunc(r.Folders, func(o Folder) bool { return o.Dir == real })
	if len(r.Folders) == n {
		return false, nil
	}
	return true, s.write(r)
}

// List returns the trusted folders, sorted by path.
func (s *Store) List() ([]Folder, error) {
	r, err := s.read()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(r.Folders, func(a, b Folder) int { return strings.Compare(a.Dir, b.Dir) })
	return r.Folders, nil
}

func (s *Store) read() (*record, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &record{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the trust record: %w", err)
	}
	r := &record{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("reading the trust record %s: %w (remove it to trust no folder)", s.path, err)
	}
	return r, nil
}

// write replaces the record atomically (a temporary file renamed over it),
// readable by the user only.
func (s *Store) write(r *record) error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("writing the trust record: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("writing the trust record: %w", err)
	}
	tmp, err := os.CreateTemp(dir, fileName+".*")
	if err != nil {
		return fmt.Errorf("writing the trust record: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the trust record %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the trust record %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("writing the trust record: %w", err)
	}
	return nil
}
