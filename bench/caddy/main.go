// Command caddy is Caddy v2 with its standard modules, built from the module
// proxy at the version go.mod pins, for bench/proxy.sh's Caddy side (the Go
// reverse proxy people run locally). It is its own module so that Caddy's
// dependencies stay out of gwdev's go.mod.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func main() { caddycmd.Main() }
