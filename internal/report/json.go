package report

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/gwdev/gwdev/engine"
)

// WriteObjectsJSON writes the objects as a kubectl-style v1 List, one item
// at a time, byte for byte as json.MarshalIndent writes the whole List,
// with check's findings beside the items ("findings"; nil: left out, as
// /status writes it).
func WriteObjectsJSON(w io.Writer, res *engine.Result, findings []Finding) error {
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
