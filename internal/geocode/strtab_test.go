package geocode

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The trie walk finds exactly the words within reach, as the plain
// matrix counts them, and osaWithin agrees with it.
func TestFuzzyFindsWhatTheMatrixFinds(t *testing.T) {
	if raceOn {
		t.Skip("runs in make test's pass without the race detector (see the Makefile)")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, 1+rng.IntN(9))
		for i := range b {
			b[i] = "abcde"[rng.IntN(5)]
		}
		return string(b)
	}
	set := map[string]bool{}
	for range 3000 {
		set[word()] = true
	}
	var words []string
	for w := range set {
		words = append(words, w)
	}
	slices.Sort(words)
	tab := newStrtab(words)
	var scratch []uint8
	for range 300 {
		q := word()
		for maxd := 0; maxd <= 2; maxd++ {
			got := map[string]int{}
			tab.fuzzy(q, maxd, &scratch, func(i, d int) { got[tab.at(i)] = d })
			for _, w := range words {
				d := osa(q, w)
				if g, ok := got[w]; (d <= maxd) != ok || ok && g != d {
					t.Fatalf("fuzzy(%q, %d): %q at %d, found %v (%d)", q, maxd, w, d, ok, g)
				}
				if want, g := min(d, maxd+1), osaWithin(q, w, maxd); g != want {
					t.Fatalf("osaWithin(%q, %q, %d) = %d, want %d", q, w, maxd, g, want)
				}
			}
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"jamaica", "jmaaica", 1}, {"springfield", "sprnigfeild", 2}, {"braddock", "bradock", 1}, {"ab", "ba", 1}, {"", "abc", 3}} {
		if d := osa(c.a, c.b); d != c.d {
			t.Errorf("osa(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}

// BenchmarkFuzzy is the walk of the whole vocabulary for a word that
// matches nothing (the slow path of a typo) on the fixture's words and
// 50,000 made-up ones.
func BenchmarkFuzzy(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	set := map[string]bool{}
	for len(set) < 50000 {
		n := 4 + rng.IntN(8)
		w := make([]byte, n)
		for i := range w {
			w[i] = byte('a' + rng.IntN(26))
		}
		set[string(w)] = true
	}
	var words []string
	for w := range set {
		words = append(words, w)
	}
	slices.Sort(words)
	tab := newStrtab(words)
	var scratch []uint8
	b.ReportAllocs()
	for b.Loop() {
		tab.fuzzy("springfeild", 2, &scratch, func(int, int) {})
	}
}

// BenchmarkOSAWithin is one bounded comparison, as the typos among the
// candidate streets make hundreds of per query.
func BenchmarkOSAWithin(b *testing.B) {
	for _, c := range []struct{ name, a, b string }{{"near", "springfeild", "springfield"}, {"far", "springfeild", "washington"}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				osaWithin(c.a, c.b, 2)
			}
		})
	}
}
