package engine

import (
	"cmp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionSet accumulates conditions for one status block. Negative
// conditions are recorded first; positive ones are set last and only where no
// negative one of the same type exists (see setDefault).
type conditionSet struct {
	gen int64
	// now is the translation's time (Options.Now, shared; nil: zero).
	now   *metav1.Time
	conds []metav1.Condition
	// paths is the field path each condition type is about, where the
	// code that set it knew one (see setAt); findings point there.
	paths map[string]string
	// inOrder is set while conds are in list's order (sort sorts them
	// there; a new condition clears it).
	inOrder bool
	// handedOut is set while a status holds conds itself (handOut): the
	// next change copies them first.
	handedOut bool
}

func newConditionSet(gen int64, now *metav1.Time) *conditionSet {
	return &conditionSet{gen: gen, now: now}
}

// set records a condition, replacing an earlier one of the same type only if
// the earlier one is True (the first failure of a type wins).
func (c *conditionSet) set(typ string, status metav1.ConditionStatus, reason, msg string) {
	c.setAt("", typ, status, reason, msg)
}

// setAt is set for a condition about the field at path (a field path
// inside the object, "" for the object as a whole).
func (c *conditionSet) setAt(path, typ string, status metav1.ConditionStatus, reason, msg string) {
	c.own()
	for i := range c.conds {
		if c.conds[i].Type != typ {
			continue
		}
		if c.conds[i].Status == metav1.ConditionTrue && status != metav1.ConditionTrue {
			c.conds[i] = c.make(typ, status, reason, msg)
			c.setPath(typ, path)
		}
		return
	}
	c.add(c.make(typ, status, reason, msg))
	c.setPath(typ, path)
}

// setPath records the field path of the condition of that type.
func (c *conditionSet) setPath(typ, path string) {
	switch {
	case path != "":
		if c.paths == nil {
			c.paths = map[string]string{}
		}
		c.paths[typ] = path
	case c.paths != nil:
		delete(c.paths, typ)
	}
}

// pathOf is the field path the condition of that type is about ("": the
// object as a whole, or not known).
func (c *conditionSet) pathOf(typ string) string { return c.paths[typ] }

// fail records a False condition.
func (c *conditionSet) fail(typ, reason, msg string) {
	c.set(typ, metav1.ConditionFalse, reason, msg)
}

// failAt records a False condition about the field at path.
func (c *conditionSet) failAt(path, typ, reason, msg string) {
	c.setAt(path, typ, metav1.ConditionFalse, reason, msg)
}

// setDefault records a condition only if none of that type exists.
func (c *conditionSet) setDefault(typ string, status metav1.ConditionStatus, reason, msg string) {
	if c.has(typ) {
		return
	}
	c.own()
	c.add(c.make(typ, status, reason, msg))
}

// add appends a condition. The first makes room for two: a route parent's
// status holds two (Accepted, ResolvedRefs), and growing one by one made
// a list of one first (96 bytes for each of 10,000 HTTPRoutes, garbage).
func (c *conditionSet) add(cond metav1.Condition) {
	if c.conds == nil {
		c.conds = make([]metav1.Condition, 0, 2)
	}
	c.conds = append(c.conds, cond)
	c.inOrder = false
}

func (c *conditionSet) has(typ string) bool {
	return c.get(typ) != nil
}

func (c *conditionSet) get(typ string) *metav1.Condition {
	for i := range c.conds {
		if c.conds[i].Type == typ {
			return &c.conds[i]
		}
	}
	return nil
}

// isFalse reports whether the condition of that type is present and False.
func (c *conditionSet) isFalse(typ string) bool {
	cond := c.get(typ)
	return cond != nil && cond.Status == metav1.ConditionFalse
}

// isFalseWith reports whether the condition of that type is False with
// that reason.
func (c *conditionSet) isFalseWith(typ, reason string) bool {
	cond := c.get(typ)
	return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == reason
}

func (c *conditionSet) make(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	var now metav1.Time
	if c.now != nil {
		now = *c.now
	}
	return metav1.Condition{
		Type:               typ,
		Status:             status,
		ObservedGeneration: c.gen,
		LastTransitionTime: now,
		Reason:             reason,
		Message:            msg,
	}
}

// conditionRank orders condition types in status: the summary conditions
// first, then the rest alphabetically.
func conditionRank(typ string) int {
	switch typ {
	case "Accepted":
		return 1
	case "Programmed":
		return 2
	case "ResolvedRefs":
		return 3
	case "Conflicted":
		return 4
	case "OverlappingTLSConfig":
		return 5
	case "PartiallyInvalid":
		return 6
	case "SupportedVersion":
		return 7
	}
	return 100
}

// list returns a copy of the conditions in a stable order (see
// conditionRank), the caller's to keep and change.
func (c *conditionSet) list() []metav1.Condition {
	out := make([]metav1.Condition, len(c.conds)) // never nil
	copy(out, c.sort())
	return out
}

// handOut returns the set's own conditions in list's order for a status
// that keeps them and never changes them (a route's parent status): no
// copy, 1.9 MB for 10,000 routes held from the translation's end until
// check has written its output. A later change to the set copies them
// first (own), so the status keeps what it was given.
func (c *conditionSet) handOut() []metav1.Condition {
	if len(c.conds) == 0 {
		return c.list() // never nil
	}
	c.handedOut = true
	return c.sort()
}

// own gives the set a copy of its conditions of its own if a status holds
// them (handOut), before they change.
func (c *conditionSet) own() {
	if c.handedOut {
		c.conds = slices.Clone(c.conds)
		c.handedOut = false
	}
}

// sort puts the set's own conditions in list's order and returns them,
// for callers that only read them (findings): status and findings both
// list every set, and for 10,000 routes the findings' copies were 1.8 MB
// allocated at check's peak. A set holds one condition per type, so the
// order is total and sorting the set itself changes nothing else.
func (c *conditionSet) sort() []metav1.Condition {
	if !c.inOrder {
		slices.SortStableFunc(c.conds, func(a, b metav1.Condition) int {
			return cmp.Or(cmp.Compare(conditionRank(a.Type), conditionRank(b.Type)), cmp.Compare(a.Type, b.Type))
		})
		c.inOrder = true
	}
	return c.conds
}
