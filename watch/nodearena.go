package watch

import yaml "go.yaml.in/yaml/v4"

// nodeArena hands out the fast parser's yaml.Nodes from blocks it keeps
// between documents. A document's nodes live only while the loader works
// on it (nothing loaded points at a node), and allocating them afresh was a
// quarter of all the loader allocated: 260 MB for 10,000 HTTPRoutes and
// 20,000 Services, where about 5 MB of nodes are in use at any moment. The
// zero value is ready; it is not safe for concurrent use.
type nodeArena struct {
	blocks [][]yaml.Node
	block  int // index of the block nodes come from
	next   int // index in that block of the next node
}

// first and largest block sizes, in nodes (160 bytes each).
const (
	firstNodeBlock = 64
	maxNodeBlock   = 1024
)

// node returns a zeroed node, valid until reset.
func (a *nodeArena) node() *yaml.Node {
	for a.block < len(a.blocks) && a.next == len(a.blocks[a.block]) {
		a.block++
		a.next = 0
	}
	if a.block == len(a.blocks) {
		size := firstNodeBlock
		if n := len(a.blocks); n > 0 {
			size = min(2*len(a.blocks[n-1]), maxNodeBlock)
		}
		a.blocks = append(a.blocks, make([]yaml.Node, size))
	}
	n := &a.blocks[a.block][a.next]
	a.next++
	return n
}

// reset takes back every node handed out, zeroing them so that they keep
// no strings or slices alive.
func (a *nodeArena) reset() {
	for i := 0; i < len(a.blocks) && i <= a.block; i++ {
		used := len(a.blocks[i])
		if i == a.block {
			used = a.next
		}
		clear(a.blocks[i][:used])
	}
	a.block, a.next = 0, 0
}
