// Package lsp is `gwdev lsp`: a Language Server Protocol server over a
// stream (stdio) that shows the engine's findings, status and references
// in the editor as the user types.
//
// It is a front end of internal/app's Session: the workspace is the
// project folder loaded as `gwdev check` and `gwdev up` load it (the one
// project pipeline, project.Open), with the editor's unsaved buffers
// laid over the files on disk through a watch.Overlay. Every State the
// Session publishes becomes the diagnostics (report.Findings, the
// findings `gwdev check -o json` prints) and the index that hover,
// definition, references, symbols, completion and code actions read. The
// JSON-RPC framing is go.lsp.dev/jsonrpc2's and the message types
// go.lsp.dev/protocol's; the 3.17 messages that library predates (pull
// diagnostics) are small types of this package.
//
// The server never writes a file: edits reach the disk only through a
// code action the editor applies.
package lsp
