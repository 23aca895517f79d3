package pipeline

import "testing"

// TestClaimIndexSharedHash: claims whose keys hash alike are told apart
// by key, and each is dropped alone, first, last or between.
func TestClaimIndexSharedHash(t *testing.T) {
	x := newClaimIndex()
	const h = 42 // every claim here has this hash
	cs := []*claim{{key: "a", hash: h}, {key: "b", hash: h}, {key: "c", hash: h}, {key: "d", hash: h}}
	for _, c := range cs {
		if x.get(c.key, h) != nil {
			t.Fatalf("%s found before it was put", c.key)
		}
		x.put(c)
	}
	check := func(want ...string) {
		t.Helper()
		in := map[string]bool{}
		for _, k := range want {
			in[k] = true
		}
		for _, c := range cs {
			if got := x.get(c.key, h); (got == c) != in[c.key] || (got != nil && got != c) {
				t.Errorf("get(%s) = %v, want it there: %t", c.key, got, in[c.key])
			}
			if c.indexed != in[c.key] {
				t.Errorf("%s indexed = %t", c.key, c.indexed)
			}
		}
		if x.get("e", h) != nil {
			t.Error("a key never put was found")
		}
	}
	check("a", "b", "c", "d")
	x.drop(cs[1]) // between
	check("a", "c", "d")
	x.drop(cs[3]) // the first in its chain: put last
	check("a", "c")
	x.drop(cs[3]) // again: nothing
	check("a", "c")
	x.drop(cs[0]) // the last
	check("c")
	x.drop(cs[2])
	check()
	if len(x.m) != 0 {
		t.Errorf("%d hashes left", len(x.m))
	}
	x.put(cs[1])
	check("b")
}
