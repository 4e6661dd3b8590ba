package main

import (
	"bufio"
	"encoding/json"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/engine"
)

// writeObjectsYAML writes every object with its status as a multi-document
// YAML stream, "---" before each, one object at a time: the bytes are
// those of sigs.k8s.io/yaml.Marshal (see yamlemit.go).
func writeObjectsYAML(w io.Writer, res *engine.Result) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var (
		tree jsonTree
		em   yamlEmitter
		jb   []byte
	)
	err := res.EachOutput(func(obj any) error {
		b, err := appendObjectYAML(&tree, &em, jb[:0], obj)
		if err != nil {
			return err
		}
		jb = b[:0]
		if _, err := bw.WriteString("---\n"); err != nil {
			return err
		}
		_, err = bw.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// appendObjectYAML renders obj as YAML in buf's space.
func appendObjectYAML(tree *jsonTree, em *yamlEmitter, buf []byte, obj any) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	root, err := tree.parse(j)
	if err == nil {
		em.out = buf
		if err = em.document(tree, root); err == nil {
			return em.out, nil
		}
	}
	if err != errOutsideSubset {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}

// writeObjectsJSON writes the objects as a kubectl-style v1 List, one item
// at a time, byte for byte as json.MarshalIndent writes the whole List,
// with check's findings beside the items ("findings"; nil: left out, as
// /status writes it).
func writeObjectsJSON(w io.Writer, res *engine.Result, findings []machineFinding) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": [")
	n := 0
	err := res.EachOutput(func(obj any) error {
		b, err := json.MarshalIndent(obj, "    ", "  ")
		if err != nil {
			return err
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		n++
		bw.WriteString("\n    ")
		_, err = bw.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	if n > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]")
	if findings != nil {
		b, err := json.MarshalIndent(findings, "  ", "  ")
		if err != nil {
			return err
		}
		bw.WriteString(",\n  \"findings\": ")
		bw.Write(b)
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}
