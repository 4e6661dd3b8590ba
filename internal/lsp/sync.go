package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"
)

// didOpen keeps the buffer and lays its text over the file.
func (s *server) didOpen(_ context.Context, raw json.RawMessage) (any, error) {
	var p protocol.DidOpenTextDocumentParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	path, err := pathOf(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.docs[path]; old != nil {
		s.openBytes -= len(old.text)
	} else if len(s.docs) >= MaxOpenDocuments {
		s.showMessage(protocol.MessageTypeWarning, "gwdev: more than "+itoa(MaxOpenDocuments)+" buffers open: "+path+" is read from disk, its unsaved changes are not seen")
		return nil, nil
	}
	d := &document{uri: p.TextDocument.URI, path: path, text: p.TextDocument.Text}
	s.docs[path] = d
	s.overlayLocked(d)
	return nil, nil
}

// didChange applies the changes to the buffer and lays it over the file
// again; the watcher coalesces a burst of them.
func (s *server) didChange(_ context.Context, raw json.RawMessage) (any, error) {
	var p didChangeParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	path, err := pathOf(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.docs[path]
	if d == nil {
		return nil, nil // not opened (or refused at open): the disk is read
	}
	changes := p.ContentChanges
	if d.refused != "" {
		// The text was let go: only a whole new text can be followed.
		full := -1
		for i, c := range changes {
			if c.Range == nil {
				full = i
			}
		}
		if full < 0 {
			return nil, nil
		}
		changes = changes[full:]
	}
	s.openBytes -= len(d.text)
	d.apply(changes)
	s.overlayLocked(d)
	return nil, nil
}

// didClose forgets the buffer: the file on disk is read again.
func (s *server) didClose(_ context.Context, raw json.RawMessage) (any, error) {
	var p protocol.DidCloseTextDocumentParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	path, err := pathOf(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.docs[path]; d != nil {
		s.openBytes -= len(d.text)
		delete(s.docs, path)
	}
	s.overlay.Drop(path)
	return nil, nil
}

// overlayLocked lays d's text over its file, or drops the overlay (and
// the text) when it is refused: too large, or over MaxOpenBytes with the
// other buffers. s.mu is held; s.openBytes does not count d.
func (s *server) overlayLocked(d *document) {
	why := validText(d.text)
	if why == "" && s.openBytes+len(d.text) > MaxOpenBytes {
		why = "open buffers hold more than " + itoa(MaxOpenBytes) + " bytes; the file on disk is read instead"
	}
	if why != "" {
		if d.refused == "" {
			s.showMessage(protocol.MessageTypeWarning, "gwdev: "+d.path+": "+why)
		}
		d.refused, d.text = why, ""
		s.overlay.Drop(d.path)
		return
	}
	d.refused = ""
	s.openBytes += len(d.text)
	s.overlay.Set(d.path, []byte(d.text))
}

// showMessage tells the user something in the editor.
func (s *server) showMessage(t protocol.MessageType, msg string) {
	go s.notify(protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: t, Message: msg})
}
