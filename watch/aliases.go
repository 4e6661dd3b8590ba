package watch

import (
	"bytes"
	"fmt"
	"math"

	yaml "go.yaml.in/yaml/v4"
)

// YAML aliases let a few hundred bytes stand for billions of nodes (the
// "billion laughs" document). The apiserver decodes YAML with
// sigs.k8s.io/yaml, whose decoder (go.yaml.in/yaml/v2) refuses a document
// when too large a share of the nodes it decodes come from alias expansion:
// up to 99% for documents of at most 400,000 decoded nodes, scaling down
// to 10% at 4,000,000 and above, checked once more than 100 nodes came
// from aliases and more than 1,000 were decoded. checkAliases applies the
// same rule to a parsed node tree before anything expands it, in time
// linear in the text and without expanding: the expanded size of each
// anchored node is computed once and reused by its aliases.
const (
	aliasRatioRangeLow  = 400_000
	aliasRatioRangeHigh = 4_000_000
)

// allowedAliasRatio is the largest share of decoded nodes that may come
// from aliases in a document of decoded nodes.
func allowedAliasRatio(decoded int64) float64 {
	switch {
	case decoded <= aliasRatioRangeLow:
		return 0.99
	case decoded >= aliasRatioRangeHigh:
		return 0.10
	}
	return 0.99 - 0.89*float64(decoded-aliasRatioRangeLow)/float64(aliasRatioRangeHigh-aliasRatioRangeLow)
}

// aliasCounter walks a document in order, counting the nodes a decoder
// would produce, as the decoder counts them.
type aliasCounter struct {
	// sizes holds the expanded size of each anchored node, -1 while the
	// node is being walked (an alias to it from inside is a cycle); nil
	// until the first anchor.
	sizes   map[*yaml.Node]int64
	decoded int64 // nodes produced so far, aliases expanded
	aliased int64 // of those, nodes produced by expanding aliases
	// bad is the alias at which the document went over the limit, or
	// that refers to a node containing it; msg says which.
	bad *yaml.Node
	msg string
}

// checkAliases returns the issue that makes the document n unacceptable
// because of its aliases, with the alias it is about, or nil.
func checkAliases(n *yaml.Node) (*yaml.Node, string) {
	c := &aliasCounter{}
	c.walk(n)
	return c.bad, c.msg
}

// satAdd adds without overflowing: expanded sizes grow exponentially.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// walk visits n (reached without an alias) and returns its expanded size.
func (c *aliasCounter) walk(n *yaml.Node) int64 {
	if c.bad != nil {
		return 0
	}
	c.decoded++
	if n.Kind == yaml.AliasNode {
		target := c.expanded(n)
		if c.bad != nil {
			return 0
		}
		c.decoded = satAdd(c.decoded, target)
		c.aliased = satAdd(c.aliased, target)
		if c.aliased > 100 && c.decoded > 1000 && float64(c.aliased)/float64(c.decoded) > allowedAliasRatio(c.decoded) {
			c.bad = n
			c.msg = fmt.Sprintf("yaml: excessive aliasing: *%s expands to %s nodes, making %s of the document's %s nodes come from aliases, over the %.0f%% the Kubernetes apiserver allows; not expanded",
				n.Value, countString(target), countString(c.aliased), countString(c.decoded), 100*allowedAliasRatio(c.decoded))
			return 0
		}
		return satAdd(target, 1)
	}
	if n.Anchor != "" {
		if c.sizes == nil {
			c.sizes = map[*yaml.Node]int64{}
		}
		c.sizes[n] = -1
	}
	size := int64(1)
	for _, child := range n.Content {
		size = satAdd(size, c.walk(child))
		if c.bad != nil {
			return 0
		}
	}
	if n.Anchor != "" {
		c.sizes[n] = size
	}
	return size
}

// expanded returns the expanded size of the node the alias a refers to.
func (c *aliasCounter) expanded(a *yaml.Node) int64 {
	if a.Alias == nil {
		return 0 // an unknown alias: the converter reports it
	}
	size, known := c.sizes[a.Alias]
	switch {
	case known && size < 0:
		c.bad, c.msg = a, fmt.Sprintf("yaml: alias *%s refers to a node that contains it; not expanded", a.Value)
		return 0
	case known:
		return size
	}
	// An anchor not met in document order (not produced by the parser, but
	// cheap to handle): walk it once with the counters set aside.
	saved := *c
	size = c.walk(a.Alias)
	c.decoded, c.aliased = saved.decoded, saved.aliased
	return size
}

// countString renders a node count, "more than 9.2e18" when saturated.
func countString(n int64) string {
	if n == math.MaxInt64 {
		return "more than 9.2e18"
	}
	return fmt.Sprint(n)
}

// CheckAliases parses data (YAML, possibly several documents) and returns
// an error naming file:line:column when a document uses aliases beyond the
// limits the Kubernetes apiserver applies (see checkAliases), without
// expanding them. Syntax errors are not reported: the caller's decoder
// words those. gwdev runs it on every YAML file it decodes other than
// manifests (gwdev.yaml); manifests are checked by the Loader.
func CheckAliases(file string, data []byte) error {
	dec, err := yaml.NewLoader(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	for {
		var n yaml.Node
		err := dec.Load(&n)
		if err != nil { // io.EOF, or a syntax error the caller words
			return nil
		}
		if bad, msg := checkAliases(&n); bad != nil {
			return fmt.Errorf("%s:%d:%d: %s", file, bad.Line, bad.Column, msg)
		}
	}
}
