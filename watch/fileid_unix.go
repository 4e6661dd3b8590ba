//go:build unix

package watch

import (
	"os"
	"syscall"
)

// fileID identifies a file or directory independently of the path used to
// reach it.
type fileID struct {
	dev, ino uint64
}

// idOf returns the identity of fi, if the platform provides one.
func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true //nolint:unconvert // Dev is int32 on some platforms
}
