package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gwdev/gwdev/emulator/admin"
)

// AdminState is what became of the admin API at start: where it serves and
// what to tell the user.
type AdminState struct {
	// Addr is where it serves ("" : off).
	Addr string
	// Note says where it serves, or why it does not, and which instance
	// this is; Problem is set when the address asked for could not be used.
	Note    string
	Problem bool
	// Web is the web view's URL ("": not served).
	Web string
}

// InstanceID names this gwdev process in the admin API's Gwdev-Instance
// header and in the notices: pid and watched folder.
func InstanceID(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return fmt.Sprintf("pid %d, %s", os.Getpid(), abs)
}

// ServeAdmin starts the admin API on addrWanted (--admin). When that
// address is in use (another gwdev, most likely), it serves on a free port
// of the same host instead and says so; any other failure leaves it off,
// said too.
func ServeAdmin(ctx context.Context, addrWanted string, adm *admin.Admin, opts admin.Options, instance string) AdminState {
	opts.Instance = instance
	addr, _, err := admin.Serve(ctx, addrWanted, adm, opts)
	if err == nil {
		st := AdminState{Addr: addr.String(), Note: fmt.Sprintf("admin API on http://%s/ (%s)", addr, instance)}
		if opts.Web != nil {
			st.Web = fmt.Sprintf("http://%s%s", addr, admin.WebPath)
			st.Note = fmt.Sprintf("admin API on http://%s/, web view on %s (%s)", addr, st.Web, instance)
		}
		return st
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		host, _, _ := net.SplitHostPort(addrWanted)
		if alt, _, err2 := admin.Serve(ctx, net.JoinHostPort(host, "0"), adm, opts); err2 == nil {
			web := ""
			if opts.Web != nil {
				web = fmt.Sprintf("http://%s%s", alt, admin.WebPath)
			}
			return AdminState{Web: web, Addr: alt.String(), Problem: true, Note: fmt.Sprintf(
				"admin API: %s is in use (another gwdev? its answers carry a different %s header); this one (%s) serves it on http://%s/%s",
				addrWanted, admin.InstanceHeader, instance, alt, webNote(web))}
		}
	}
	return AdminState{Problem: true, Note: fmt.Sprintf("admin API off: %v (--admin ADDR to move it)", err)}
}

// webNote is what a notice adds for the web view at url ("": not served).
func webNote(url string) string {
	if url == "" {
		return ""
	}
	return ", the web view on " + url
}
