package engine

// TranslateNext is Translate for a gateway that keeps running while its
// manifests change, which is what `gwdev up` and the conformance harness
// do on every reload: prev is the result of the previous translation (nil:
// this is the first). Each Gateway that still exists keeps the loopback
// address prev gave it, as a load balancer keeps a Service's IP, so adding
// a Gateway that sorts first does not move the others; new Gateways take
// free addresses; spec.addresses still wins (a Gateway that asks for an
// address gets it, and one that had it takes the next free address).
// Translate alone numbers Gateways by namespace/name.
func TranslateNext(prev *Result, snap *Snapshot, opts Options) *Result {
	if prev != nil {
		opts.previous = prev.addresses
	}
	return Translate(snap, opts)
}
