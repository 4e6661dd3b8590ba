package emulator

import (
	"math/rand/v2"
	"sync"
)

// pickSource decides weighted backend picks from a seed (Config.PickSeed):
// one per Server, shared by all its routes, so that the same requests sent
// in the same order get the same backends (gwdev test's splits). A nil
// pickSource picks at random, as a Server without a seed does.
type pickSource struct {
	mu sync.Mutex
	r  *rand.Rand
}

// newPickSource is the source for seed (0: nil, random picks).
func newPickSource(seed uint64) *pickSource {
	if seed == 0 {
		return nil
	}
	return &pickSource{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// int32n is a number in [0, n).
func (p *pickSource) int32n(n int32) int32 {
	if p == nil {
		return rand.Int32N(n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.r.Int32N(n)
}
