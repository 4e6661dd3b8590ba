package ingressnginx

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// NginxConf writes the server and location blocks that
// ingress-nginx's template generates for the Ingresses of snap, as its
// documentation describes them ("Ingress Path Matching", the annotations
// page): "location = path" for an exact location, "location path" for a
// prefix, 'location ~* "^path"' in regex mode (in order of descending
// length), 'rewrite "(?i)path" target break;' for rewrite-target, and the
// default backend's "location /" answering 404. Each location proxies to
// upstream with header X-Gwdev-Location set to the name of the table rule
// that emulates it, so a differential test can run real nginx with it and
// compare its choices with the data plane's. listen is the address:port
// every server listens on. Only location selection, regexes, rewrites and
// nginx's own redirects are written, with client_max_body_size
// (proxy-body-size) and the CORS block of enable-cors (add_header ... always
// where ingress-nginx writes more_set_headers, which Debian's nginx lacks):
// the annotations ingress-nginx implements in Lua (HTTPS redirects,
// canaries) are not.
func NginxConf(snap *engine.Snapshot, opts engine.Options, listen, upstream string) string {
	t := &translator{tr: engine.NewTranslation(snap, opts)}
	t.processIngresses()
	var b strings.Builder
	for _, c := range t.ingressClasses {
		for _, s := range t.nginxServers(c) {
			writeNginxServer(&b, s, listen, upstream)
		}
	}
	return b.String()
}

// writeNginxServer writes one server block with its locations in the order
// the table compiles them.
func writeNginxServer(b *strings.Builder, s *nginxServer, listen, upstream string) {
	if s.host == "" {
		fmt.Fprintf(b, "server {\n  listen %s default_server;\n  server_name _;\n", listen)
	} else {
		fmt.Fprintf(b, "server {\n  listen %s;\n  server_name %s;\n", listen, s.host)
	}
	for _, l := range nginxLocationOrder(s) {
		var head string
		switch {
		case s.regex:
			head = "~* " + nginxQuote("^"+l.path)
		case l.exact:
			head = "= " + nginxQuote(l.path)
		default:
			head = nginxQuote(l.path)
		}
		fmt.Fprintf(b, "  location %s {\n", head)
		if l.backend == nil {
			b.WriteString("    return 404;\n  }\n")
			continue
		}
		fmt.Fprintf(b, "    client_max_body_size %d;\n", l.ing.ann.bodyLimit)
		if c := l.ing.ann.cors; c != nil {
			writeNginxCORS(b, c)
		}
		if a := l.ing.ann; a.nginxRewrite != "" && s.regex {
			fmt.Fprintf(b, "    rewrite %s %s break;\n", nginxQuote("(?i)"+l.path), a.nginxRewrite)
		}
		fmt.Fprintf(b, "    proxy_set_header X-Gwdev-Location %s;\n    proxy_pass http://%s;\n  }\n", nginxQuote(l.name), upstream)
	}
	b.WriteString("}\n")
}

// nginxLocationOrder is the order the table's rules follow: regex mode by
// descending path length; otherwise exact locations, then prefixes by
// descending length (nginx's own choice does not depend on their order).
func nginxLocationOrder(s *nginxServer) []*nginxLocation {
	var exact, rest []*nginxLocation
	for _, l := range s.locations {
		if l.exact && !s.regex {
			exact = append(exact, l)
		} else {
			rest = append(rest, l)
		}
	}
	sortByPathLength(rest)
	return append(exact, rest...)
}

// nginxQuote writes s as an nginx quoted string.
func nginxQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// writeNginxCORS writes ingress-nginx's CORS block: $cors is "true" for an
// allowed origin (every request for "*", whose answers say "*"), gains
// "options" on OPTIONS, and "trueoptions" is answered by nginx itself.
func writeNginxCORS(b *strings.Builder, c *table.CORS) {
	b.WriteString("    set $cors '';\n    set $cors_origin $http_origin;\n")
	if c.AnyOrigin {
		b.WriteString("    set $cors_origin *;\n    set $cors 'true';\n")
	} else {
		var alts []string
		for _, o := range c.AllowOrigins {
			host := strings.ReplaceAll(regexp.QuoteMeta(o.Host), `\*`, `[A-Za-z0-9\-]+`)
			port := ""
			if !(o.Scheme == "http" && o.Port == "80" || o.Scheme == "https" && o.Port == "443") {
				port = ":" + o.Port
			}
			alts = append(alts, "^"+regexp.QuoteMeta(o.Scheme)+"://"+host+port+"$")
		}
		fmt.Fprintf(b, "    if ($http_origin ~* (%s)) { set $cors 'true'; }\n", strings.Join(alts, "|"))
	}
	b.WriteString("    if ($request_method = 'OPTIONS') { set $cors ${cors}options; }\n")
	headers := func(extra string) string {
		h := "add_header Access-Control-Allow-Origin $cors_origin always; "
		if c.AllowCredentials {
			h += "add_header Access-Control-Allow-Credentials true always; "
		}
		h += "add_header Access-Control-Allow-Methods " + nginxQuote(strings.Join(c.AllowMethods, ", ")) + " always; "
		h += "add_header Access-Control-Allow-Headers " + nginxQuote(strings.Join(c.AllowHeaders, ", ")) + " always; "
		if len(c.ExposeHeaders) > 0 {
			h += "add_header Access-Control-Expose-Headers " + nginxQuote(strings.Join(c.ExposeHeaders, ", ")) + " always; "
		}
		return h + fmt.Sprintf("add_header Access-Control-Max-Age %d always; ", c.MaxAge) + extra
	}
	fmt.Fprintf(b, "    if ($cors = 'true') { %s}\n", headers(""))
	fmt.Fprintf(b, "    if ($cors = 'trueoptions') { %s}\n", headers("add_header Content-Type 'text/plain charset=UTF-8' always; return 204; "))
}
