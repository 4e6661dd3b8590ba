package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine/ingressnginx"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/watch"
)

// Migration is gwdev migrate's conversion of a folder's Ingresses.
type Migration struct {
	*ingressnginx.Migration
	// Manifests are the converted objects as YAML documents.
	Manifests []byte
	// Converted is Manifests loaded as the file name, judged against the
	// project's CRDs.
	Converted *watch.LoadResult
}

// Migrate converts the Ingresses of lr (the load of the folder dir) to
// the Gateway API, writes the manifests and judges them, named name, as
// the folder was judged.
func Migrate(p *project.Project, lr *watch.LoadResult, dir, name string, mo ingressnginx.MigrationOptions) (*Migration, error) {
	res := p.Translate(lr.Snapshot, project.Translation{Now: metav1.NewTime(time.Now().UTC().Truncate(time.Second))})
	m := ingressnginx.Migrate(res, mo)
	var buf bytes.Buffer
	if err := writeMigration(&buf, dir, m); err != nil {
		return nil, err
	}
	return &Migration{Migration: m, Manifests: buf.Bytes(), Converted: p.LoadBytes(name, buf.Bytes())}, nil
}

// writeMigration writes the objects as YAML documents, each under its
// comments, without status.
func writeMigration(w io.Writer, dir string, m *ingressnginx.Migration) error {
	fmt.Fprintf(w, "# Gateway API manifests written by gwdev migrate from the Ingresses in %s.\n", dir)
	fmt.Fprintf(w, "# Compare both sides with: gwdev migrate --compare %s\n", dir)
	for _, o := range m.Objects {
		doc, err := manifestYAML(o.Object)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "---")
		for _, c := range o.Comments {
			fmt.Fprintln(w, "# "+c)
		}
		if _, err := w.Write(doc); err != nil {
			return err
		}
	}
	return nil
}

// manifestYAML renders an object as a manifest: no status, no empty
// creationTimestamp.
func manifestYAML(obj any) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var u map[string]any
	if err := json.Unmarshal(b, &u); err != nil {
		return nil, err
	}
	delete(u, "status")
	if md, ok := u["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	return report.YAML(u)
}
