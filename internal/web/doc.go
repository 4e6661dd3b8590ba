// Package web is gwdev up's web view, served by the admin API under /ui/:
// the topology as a picture (its DOT laid out in the page by Graphviz
// compiled to WebAssembly, assets/viz-global.js),
// the live traces, the objects with their status and check's findings,
// and the Migration comparison when the folder has Ingresses. It reads the
// Session's published State, as the dashboard does, and never loads or
// translates anything itself.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary
// (assets/, no build step) plus @viz-js/viz's viz-global.js, which
// `make web` copies from the version web/package-lock.json pins: nothing
// is loaded from outside gwdev. Every
// answer carries a strict Content-Security-Policy; requests whose Origin
// is another site are refused, and the admin API's Host guard (loopback
// names only) stands in front of it against DNS rebinding.
//
// Live updates are server-sent events: /ui/events tells each open page
// that a new State was published (the page then fetches /ui/state), and
// the traces come from the admin API's /traces/stream. Both are bounded:
// a page's queue of state notices is one notice (newer ones coalesce), at
// most MaxPages pages are served at once, and a page that does not read
// within the write deadline is dropped and counted.
package web
