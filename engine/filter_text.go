package engine

import (
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// DescribeFilter renders a filter of the routing table on one line, as the
// dashboard's Routes view and `gwdev graph` show it: its type and what it
// does ("URLRewrite (path prefix → /v2)", "RequestHeaderModifier (set
// X-Env: dev)"); mirrors are the resolved mirror backends of its rule or
// backend.
func DescribeFilter(f table.Filter, mirrors []*Backend) string {
	s := string(f.Type)
	headers := func(h *table.HeaderModifier) string {
		var p []string
		for _, x := range h.Set {
			p = append(p, "set "+x.Name+": "+x.Value)
		}
		for _, x := range h.Add {
			p = append(p, "add "+x.Name+": "+x.Value)
		}
		for _, x := range h.Remove {
			p = append(p, "remove "+x)
		}
		return strings.Join(p, ", ")
	}
	var detail string
	switch {
	case f.RequestHeaderModifier != nil:
		detail = headers(f.RequestHeaderModifier)
	case f.ResponseHeaderModifier != nil:
		detail = headers(f.ResponseHeaderModifier)
	case f.RequestRedirect != nil:
		r := f.RequestRedirect
		var p []string
		if r.Scheme != "" {
			p = append(p, "scheme "+r.Scheme)
		}
		if r.Hostname != "" {
			p = append(p, "host "+r.Hostname)
		}
		if r.Port != 0 {
			p = append(p, "port "+strconv.Itoa(int(r.Port)))
		}
		if r.Path != nil {
			p = append(p, "path "+pathRewriteText(*r.Path))
		}
		p = append(p, "status "+strconv.Itoa(r.StatusCode))
		detail = strings.Join(p, ", ")
	case f.URLRewrite != nil:
		var p []string
		if f.URLRewrite.Hostname != "" {
			p = append(p, "host "+f.URLRewrite.Hostname)
		}
		if f.URLRewrite.Path != nil {
			p = append(p, "path "+pathRewriteText(*f.URLRewrite.Path))
		}
		detail = strings.Join(p, ", ")
	case f.RequestMirror != nil:
		if i := f.RequestMirror.Index; i < len(mirrors) && mirrors[i] != nil {
			detail = "to " + mirrors[i].Service.Name
		}
	case f.Unsupported != "":
		detail = f.Unsupported
	}
	if detail != "" {
		s += " (" + detail + ")"
	}
	return s
}

// pathRewriteText renders a path rewrite: "= /full" or "prefix → /new".
func pathRewriteText(p table.PathRewrite) string {
	if p.Type == table.ReplaceFullPath {
		return "= " + p.Value
	}
	if p.Value == "" {
		return "prefix → /"
	}
	return "prefix → " + p.Value
}
