package app

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// treeEntry is one blob of a commit's tree (git ls-tree -r).
type treeEntry struct {
	mode, oid, name string
}

// extract writes the repository as it is at commit under tmp and returns
// DIR's path there ("" when DIR did not exist at commit: everything is
// new), and what it left out. The whole tree is written, so that symlinks
// from DIR to elsewhere in the repository resolve as they do in the working
// tree.
//
// The blobs are read from git's object store (ls-tree, cat-file), never
// through a work tree or an archive, and written through an os.Root, which
// refuses any path that leaves tmp: regular files first, into directories
// it makes itself, then the symlinks. A symlink that points outside the
// repository, or an entry whose name is already taken (a tree holding "x"
// both as a symlink and as a folder, or "X" and "x" on a case-insensitive
// filesystem), is left out, and said so: the first of a name stays.
func (r *gitRepo) extract(commit, tmp string) (string, []string, error) {
	tree := commit
	if r.prefix != "" {
		tree += ":" + strings.TrimSuffix(r.prefix, "/")
	}
	if _, err := r.git("cat-file", "-e", tree); err != nil {
		return "", nil, nil
	}
	entries, err := r.lsTree(commit)
	if err != nil {
		return "", nil, err
	}
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return "", nil, err
	}
	defer root.Close()
	var files, links []treeEntry
	for _, e := range entries {
		switch e.mode {
		case "100644", "100755":
			files = append(files, e)
		case "120000":
			links = append(links, e)
		}
	}
	var left []string
	made := map[string]string{} // symlinks made: name → target
	err = r.catBlobs(append(files, links...), func(e treeEntry, data []byte) error {
		if e.mode == "120000" {
			if why := writeTreeSymlink(root, e.name, string(data)); why != "" {
				left = append(left, fmt.Sprintf("symlink %s → %s left out: %s", e.name, data, why))
			} else {
				made[e.name] = string(data)
			}
			return nil
		}
		if err := writeTreeFile(root, e.name, data); errors.Is(err, errNameTaken) || errors.Is(err, os.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
			// One name twice in the tree, or a file where the tree has a
			// folder: what a case-insensitive filesystem makes of two
			// names that differ only in case. The first one stays.
			left = append(left, fmt.Sprintf("%s left out: %v", e.name, err))
		} else if err != nil {
			return fmt.Errorf("writing %s of %s: %w", e.name, commit, err)
		}
		return nil
	})
	if err != nil {
		return "", left, err
	}
	// Through other symlinks of the tree, a target inside by its text can
	// still resolve outside ("s/../x" where s is "../.."): once they all
	// exist, look where each leads. Removing one never makes another lead
	// outside (it dangles instead), so one pass is enough.
	realTmp, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		return "", left, err
	}
	for _, name := range slices.Sorted(maps.Keys(made)) {
		real, err := filepath.EvalSymlinks(filepath.Join(tmp, filepath.FromSlash(name)))
		if err != nil || real == realTmp || strings.HasPrefix(real, realTmp+string(filepath.Separator)) {
			continue // dangling (it reads nothing), or inside
		}
		if err := root.Remove(name); err != nil {
			return "", left, err
		}
		left = append(left, fmt.Sprintf("symlink %s → %s left out: it resolves outside the repository", name, made[name]))
	}
	return filepath.Join(tmp, filepath.FromSlash(r.prefix)), left, nil
}

// lsTree lists the blobs of commit's whole tree.
func (r *gitRepo) lsTree(commit string) ([]treeEntry, error) {
	cmd := exec.Command("git", "-C", r.root, "ls-tree", "-r", "-z", "--full-tree", commit)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-tree %s: %s", commit, strings.TrimSpace(stderr.String()))
	}
	var entries []treeEntry
	for rec := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		meta, name, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" {
			continue // submodules (commit entries) have no content here
		}
		entries = append(entries, treeEntry{mode: f[0], oid: f[2], name: name})
	}
	return entries, nil
}

// catBlobs reads the entries' blobs with one git cat-file --batch, in
// order, and hands each to write.
func (r *gitRepo) catBlobs(entries []treeEntry, write func(treeEntry, []byte) error) error {
	cmd := exec.Command("git", "-C", r.root, "cat-file", "--batch")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		w := bufio.NewWriter(in)
		for _, e := range entries {
			_, _ = w.WriteString(e.oid + "\n")
		}
		_ = w.Flush()
		_ = in.Close()
	}()
	br := bufio.NewReader(outPipe)
	var werr error
	for _, e := range entries {
		head, err := br.ReadString('\n')
		if err != nil {
			werr = fmt.Errorf("git cat-file: %w", err)
			break
		}
		f := strings.Fields(head)
		if len(f) != 3 || f[1] != "blob" {
			werr = fmt.Errorf("git cat-file: %s is %q, not a blob", e.oid, strings.TrimSpace(head))
			break
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			werr = fmt.Errorf("git cat-file: %q", strings.TrimSpace(head))
			break
		}
		data := make([]byte, size+1) // and the newline after it
		if _, err := io.ReadFull(br, data); err != nil {
			werr = fmt.Errorf("git cat-file: %w", err)
			break
		}
		if werr = write(e, data[:size]); werr != nil {
			break
		}
	}
	_, _ = io.Copy(io.Discard, br)
	if err := cmd.Wait(); err != nil && werr == nil {
		werr = fmt.Errorf("git cat-file: %s", strings.TrimSpace(stderr.String()))
	}
	return werr
}

// errNameTaken is a tree path written twice (or through a symlink).
var errNameTaken = errors.New("the name is already taken in the extracted tree (a case-insensitive filesystem folds names that differ only in case)")

// writeTreeFile writes one regular file under root, making its folders;
// it never replaces what is there.
func writeTreeFile(root *os.Root, name string, data []byte) error {
	if !validTreePath(name) {
		return fmt.Errorf("invalid path %q", name)
	}
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, os.ErrExist) {
		return errNameTaken
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeTreeSymlink makes one symlink of the tree, after every regular file
// is written; it says why when it leaves the link out.
func writeTreeSymlink(root *os.Root, name, target string) string {
	if !validTreePath(name) {
		return "invalid path"
	}
	if target == "" || filepath.IsAbs(target) || path.IsAbs(target) || strings.Contains(target, "\\") {
		return "it points outside the repository"
	}
	if to := path.Join(path.Dir(name), target); to == ".." || strings.HasPrefix(to, "../") {
		return "it points outside the repository"
	}
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err.Error()
		}
	}
	if _, err := root.Lstat(name); err == nil {
		return errNameTaken.Error()
	}
	if err := root.Symlink(target, name); err != nil {
		return err.Error()
	}
	return ""
}

// validTreePath reports whether a tree path is relative, clean and stays
// below the tree's top.
func validTreePath(name string) bool {
	return name != "" && !path.IsAbs(name) && path.Clean(name) == name && name != ".." && !strings.HasPrefix(name, "../") &&
		!strings.Contains(name, "\\")
}
