package lsp

import (
	"context"
	"encoding/json"
)

func (s *server) completion(context.Context, json.RawMessage) (any, error)       { return nil, nil }
func (s *server) codeActions(context.Context, json.RawMessage) (any, error)      { return nil, nil }
