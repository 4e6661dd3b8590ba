//go:build !unix

package watch

import "os"

// fileID identifies a file or directory independently of the path used to
// reach it; unavailable on this platform.
type fileID struct{}

// idOf reports that file identities are unknown here: symlink loops are then
// caught by the operating system's ELOOP only.
func idOf(os.FileInfo) (fileID, bool) { return fileID{}, false }
