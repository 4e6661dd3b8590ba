// Package tui is gwdev's terminal dashboard: a bubbletea program that shows
// what `gwdev up` serves and why. Six views — Overview, Routes, Problems,
// Traces, Detail and Graph — are components with Init/Update/View, SetSize and a
// help.KeyMap; one keymap (keys.go) and one styles struct (styles.go) serve
// them all. The root Model (model.go) only routes messages.
//
// The dashboard never reads files or the network by itself except through
// tea.Cmd (replaying a request, copying to the clipboard). Everything else
// arrives as typed messages sent with Program.Send: the Session's *app.State after
// every reload, app.MigrationState, TracesMsg batches from ForwardTraces, WatchErrorMsg.
//
// Files: msg.go (messages the dashboard receives), session.go (state shared
// by the views), model.go (root), layout.go (header, tabs, status line),
// overview.go, routes.go, problems.go + explain.go, traces.go +
// tracedetail.go + request.go (curl, replay, clipboard), detail.go + yaml.go, graph.go (the structure as a tree),
// forward.go (trace batching).
package tui
