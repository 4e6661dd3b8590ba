package main

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

// adminState is what became of the admin API at start: where it serves and
// what to tell the user.
type adminState struct {
	// addr is where it serves ("" : off).
	addr string
	// note says where it serves, or why it does not, and which instance
	// this is; problem is set when the address asked for could not be used.
	note    string
	problem bool
}

// instanceID names this gwdev process in the admin API's Gwdev-Instance
// header and in the notices: pid and watched folder.
func instanceID(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return fmt.Sprintf("pid %d, %s", os.Getpid(), abs)
}

// serveAdmin starts the admin API on o.admin. When that address is in use
// (another gwdev, most likely), it serves on a free port of the same host
// instead and says so; any other failure leaves it off, said too.
func (o *upOptions) serveAdmin(ctx context.Context, adm *admin.Admin, instance string) adminState {
	opts := o.limits.adminOptions()
	opts.Instance = instance
	addr, _, err := admin.Serve(ctx, o.admin, adm, opts)
	if err == nil {
		return adminState{addr: addr.String(), note: fmt.Sprintf("admin API on http://%s/ (%s)", addr, instance)}
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		host, _, _ := net.SplitHostPort(o.admin)
		if alt, _, err2 := admin.Serve(ctx, net.JoinHostPort(host, "0"), adm, opts); err2 == nil {
			return adminState{addr: alt.String(), problem: true, note: fmt.Sprintf(
				"admin API: %s is in use (another gwdev? its answers carry a different %s header); this one (%s) serves it on http://%s/",
				o.admin, admin.InstanceHeader, instance, alt)}
		}
	}
	return adminState{problem: true, note: fmt.Sprintf("admin API off: %v (--admin ADDR to move it)", err)}
}
