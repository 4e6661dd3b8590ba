package lsp

import (
	"context"
	"encoding/json"
)

func (s *server) hover(context.Context, json.RawMessage) (any, error)            { return nil, nil }
func (s *server) definition(context.Context, json.RawMessage) (any, error)       { return nil, nil }
func (s *server) references(context.Context, json.RawMessage) (any, error)       { return nil, nil }
func (s *server) documentSymbols(context.Context, json.RawMessage) (any, error)  { return nil, nil }
func (s *server) workspaceSymbols(context.Context, json.RawMessage) (any, error) { return nil, nil }
func (s *server) completion(context.Context, json.RawMessage) (any, error)       { return nil, nil }
func (s *server) codeActions(context.Context, json.RawMessage) (any, error)      { return nil, nil }
