package engine

import (
	"reflect"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// claimTestPolicy is a policy of the table below: metadata and targets.
type claimTestPolicy struct {
	meta    metav1.ObjectMeta
	targets []string
}

func (p *claimTestPolicy) GetNamespace() string              { return p.meta.Namespace }
func (p *claimTestPolicy) GetName() string                   { return p.meta.Name }
func (p *claimTestPolicy) GetCreationTimestamp() metav1.Time { return p.meta.CreationTimestamp }

// TestPolicyClaims checks GEP-713's conflict resolution as policyClaims
// decides it: oldest creationTimestamp first, then "{namespace}/{name}",
// whatever order the policies come in.
func TestPolicyClaims(t *testing.T) {
	at := func(s string) metav1.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return metav1.NewTime(tm)
	}
	pol := func(ns, name, ts string, targets ...string) *claimTestPolicy {
		p := &claimTestPolicy{meta: metav1.ObjectMeta{Namespace: ns, Name: name}, targets: targets}
		if ts != "" {
			p.meta.CreationTimestamp = at(ts)
		}
		return p
	}
	cases := []struct {
		name string
		pols []*claimTestPolicy
		// winners is target -> namespace/name of the policy holding it.
		winners map[string]string
		// lost is "policy lost target to holder", in claim order.
		lost []string
	}{
		{
			name:    "older wins though its name sorts later",
			pols:    []*claimTestPolicy{pol("ns", "a", "2021-07-15T01:02:04Z", "svc"), pol("ns", "b", "2021-07-15T01:02:03Z", "svc")},
			winners: map[string]string{"svc": "ns/b"},
			lost:    []string{"ns/a lost svc to ns/b"},
		},
		{
			name:    "same creationTimestamp: first by name",
			pols:    []*claimTestPolicy{pol("ns", "foo-baz", "2021-07-15T01:02:03Z", "svc"), pol("ns", "foo-bar", "2021-07-15T01:02:03Z", "svc")},
			winners: map[string]string{"svc": "ns/foo-bar"},
			lost:    []string{"ns/foo-baz lost svc to ns/foo-bar"},
		},
		{
			name:    "same creationTimestamp: namespace before name",
			pols:    []*claimTestPolicy{pol("b", "a", "2021-07-15T01:02:03Z", "svc"), pol("a", "z", "2021-07-15T01:02:03Z", "svc")},
			winners: map[string]string{"svc": "a/z"},
			lost:    []string{"b/a lost svc to a/z"},
		},
		{
			name:    "no creationTimestamps: first by name",
			pols:    []*claimTestPolicy{pol("ns", "second", "", "gw"), pol("ns", "first", "", "gw")},
			winners: map[string]string{"gw": "ns/first"},
			lost:    []string{"ns/second lost gw to ns/first"},
		},
		{
			name:    "a policy with a creationTimestamp before one without",
			pols:    []*claimTestPolicy{pol("ns", "a", "", "svc"), pol("ns", "b", "2030-01-01T00:00:00Z", "svc")},
			winners: map[string]string{"svc": "ns/b"},
			lost:    []string{"ns/a lost svc to ns/b"},
		},
		{
			name: "three on one target: each loser names the winner",
			pols: []*claimTestPolicy{pol("ns", "c", "2021-07-15T01:02:05Z", "svc"), pol("ns", "a", "2021-07-15T01:02:04Z", "svc"),
				pol("ns", "b", "2021-07-15T01:02:03Z", "svc")},
			winners: map[string]string{"svc": "ns/b"},
			lost:    []string{"ns/a lost svc to ns/b", "ns/c lost svc to ns/b"},
		},
		{
			name:    "targets decided one by one: a newer policy keeps the targets nobody older holds",
			pols:    []*claimTestPolicy{pol("ns", "new", "2022-01-01T00:00:00Z", "one", "two"), pol("ns", "old", "2021-01-01T00:00:00Z", "two", "three")},
			winners: map[string]string{"one": "ns/new", "two": "ns/old", "three": "ns/old"},
			lost:    []string{"ns/new lost two to ns/old"},
		},
		{
			name:    "no conflict: every policy wins its own target",
			pols:    []*claimTestPolicy{pol("ns", "b", "", "x"), pol("ns", "a", "", "y")},
			winners: map[string]string{"x": "ns/b", "y": "ns/a"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := func(p *claimTestPolicy) ObjectKey {
				return ObjectKey{Kind: "TestPolicy", Namespace: p.meta.Namespace, Name: p.meta.Name}
			}
			pols := slices.Clone(tc.pols)
			claims := newPolicyClaims[string]("TestPolicy", pols, func(p *claimTestPolicy) object { return p }, key)
			var lost []string
			for _, p := range pols {
				for _, target := range p.targets {
					if holder, won := claims.claim(target, p); !won {
						lost = append(lost, p.meta.Namespace+"/"+p.meta.Name+" lost "+target+" to "+holder.Namespace+"/"+holder.Name)
					}
				}
			}
			winners := map[string]string{}
			for target, p := range claims.winners {
				winners[target] = p.meta.Namespace + "/" + p.meta.Name
			}
			if !reflect.DeepEqual(winners, tc.winners) {
				t.Errorf("winners = %v, want %v", winners, tc.winners)
			}
			if !slices.Equal(lost, tc.lost) {
				t.Errorf("lost = %q, want %q", lost, tc.lost)
			}
		})
	}
}

// TestPolicyClaimsRelease checks that a released policy's targets go to
// the next policy in precedence order, and that the messages name the
// holder.
func TestPolicyClaimsRelease(t *testing.T) {
	older := &claimTestPolicy{meta: metav1.ObjectMeta{Namespace: "ns", Name: "older", CreationTimestamp: metav1.NewTime(time.Unix(1, 0))}}
	newer := &claimTestPolicy{meta: metav1.ObjectMeta{Namespace: "ns", Name: "newer", CreationTimestamp: metav1.NewTime(time.Unix(2, 0))}}
	key := func(p *claimTestPolicy) ObjectKey {
		return ObjectKey{Kind: "TestPolicy", Namespace: "ns", Name: p.meta.Name}
	}
	claims := newPolicyClaims[string]("TestPolicy", []*claimTestPolicy{newer, older}, func(p *claimTestPolicy) object { return p }, key)
	if _, won := claims.claim("svc", older); !won {
		t.Fatal("older did not win a free target")
	}
	claims.release(older) // as an invalid policy
	if holder, won := claims.claim("svc", newer); !won {
		t.Fatalf("newer lost a released target to %v", holder)
	}
	holder, won := claims.claim("svc", older)
	if won || holder.Name != "newer" {
		t.Fatalf("claim after release: holder %v, won %v; want newer, false", holder, won)
	}
	want := "Service ns/svc: TestPolicy ns/newer targets it too and is older or sorts first"
	if got := claims.lostMessage("Service ns/svc", holder); got != want {
		t.Errorf("lostMessage = %q, want %q", got, want)
	}
}
