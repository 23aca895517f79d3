package vrp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// cheapestByCheck is cheapest's loop over r's positions as written with
// check: the reference cheapestIn must agree with.
func (w *worker) cheapestByCheck(r *route, c int32, extra, best float64) (int, float64) {
	tb := w.t
	bestPos := -1
	late := tb.late[c] + tol
	for i := tb.firstPlace(r, c); i <= len(r.stops); i++ {
		if r.a[i] > late {
			break
		}
		w.work++
		if w.blinks() {
			continue
		}
		d, why := tb.check(r, c, i)
		if why == "" && d+extra < best {
			bestPos, best = i, d+extra
		}
	}
	return bestPos, best
}

// TestCheapestInAgreesWithCheck: the insertion loop for routes without
// breaks chooses the position, and returns the price, that the loop
// over check chooses, counts the same work and draws the same blinks
// (two workers of one seed stay in step), on random routes of random
// problems, with their own matrices in every other round (symmetric and
// not: the loop reads a symmetric matrix's arcs into the stop from the
// stop's row), prices computed from kilometres and minutes in every
// fourth, and a route kilometre limit that refuses some insertions (and
// none on other vehicles); and a route extended in
// place has exactly the earliest and latest starts and the arc prices of
// one built from scratch.
func TestCheapestInAgreesWithCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	chosen, refused := 0, 0
	var sym, asym, limited, unlimited int
	for round := 0; round < 100; round++ {
		p := randomProblem(rng, 30)
		if round%2 == 1 {
			p = profiled(rng, p, 2)
		}
		p.Goal = Goal(rng.IntN(5))
		tb := newTables(p)
		for _, tr := range tb.tr {
			if tr.kmSym && tr.minutesSym {
				sym++
			} else if !tr.kmSym && !tr.minutesSym {
				asym++
			}
		}
		for _, km := range tb.maxKm {
			if math.IsInf(km, 1) {
				unlimited++
			} else {
				limited++
			}
		}
		if round%4 == 3 {
			// Prices computed from each arc's kilometres and minutes, as
			// for the travels of a fleet beyond maxPriced.
			for k := range tb.tr {
				tb.tr[k].cost, tb.tr[k].into = nil, nil
			}
		}
		seed := rng.Uint64()
		w1 := newWorker(tb, 0, seed, time.Now().Add(time.Hour))
		w2 := newWorker(tb, 0, seed, time.Now().Add(time.Hour))
		gen := uint64(round + 1)
		routes := []*route{tb.empty[0], tb.empty[1]}
		for _, c := range rng.Perm(len(p.Stops)) {
			c := int32(c)
			for v, r := range routes {
				if !tb.fits(r, c) {
					continue
				}
				extra, best := 0.0, math.Inf(1)
				if rng.IntN(3) == 0 {
					extra, best = rng.Float64()*10, rng.Float64()*100
				}
				pb := tb.probeOf(c)
				i1, d1 := w1.cheapestIn(r, &pb, extra, best)
				i2, d2 := w2.cheapestByCheck(r, c, extra, best)
				if i1 != i2 || d1 != d2 || w1.work != w2.work || w1.unblinked != w2.unblinked {
					t.Fatalf("round %d: stop %d in route %v: position %d at %v (work %d), want %d at %v (work %d)", round, c, r.stops, i1, d1, w1.work, i2, d2, w2.work)
				}
				if i1 < 0 {
					refused++
					continue
				}
				chosen++
				nr := tb.insert(r, c, i1, gen, nil)
				fresh := tb.newRoute(int32(v), append([]int32(nil), nr.stops...))
				for k := range fresh.a {
					if nr.a[k] != fresh.a[k] || nr.z[k] != fresh.z[k] {
						t.Fatalf("round %d: position %d of %v: in place %v / %v, fresh %v / %v", round, k, nr.stops, nr.a[k], nr.z[k], fresh.a[k], fresh.z[k])
					}
				}
				if !slices.Equal(nr.leg, fresh.leg) {
					t.Fatalf("round %d: legs of %v: in place %v, fresh %v", round, nr.stops, nr.leg, fresh.leg)
				}
				routes[v] = nr
				break
			}
		}
		if w1.rng.Uint64() != w2.rng.Uint64() {
			t.Fatalf("round %d: the random streams parted", round)
		}
	}
	if chosen < 1000 || refused < 100 {
		t.Fatalf("%d insertions chosen, %d refused: too few to tell", chosen, refused)
	}
	if sym == 0 || asym == 0 || limited == 0 || unlimited == 0 {
		t.Fatalf("travels symmetric %d, not %d; vehicles with a kilometre limit %d, without %d: a case untried", sym, asym, limited, unlimited)
	}
}

// TestStringTimingAgreesWithBuild: or-opt's timing before a build
// (late2, lateWith) refuses only routes that build refuses, and refuses
// some, on random routes and strings of random problems.
func TestStringTimingAgreesWithBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	refused := 0
	for round := 0; round < 100; round++ {
		p := randomProblem(rng, 30)
		if round%2 == 1 {
			p = profiled(rng, p, 2)
		}
		tb := newTables(p)
		w := newWorker(tb, 0, rng.Uint64(), time.Now().Add(time.Hour))
		s := w.construct()
		for _, r := range s.routes {
			for _, r2 := range s.routes {
				if r == r2 || len(r.stops) < 3 {
					continue
				}
				for k := 0; k+2 <= len(r.stops); k++ {
					l := 2 + rng.IntN(min(2, len(r.stops)-k-1))
					seg := r.stops[k : k+l]
					rest := append(append([]int32(nil), r.stops[:k]...), r.stops[k+l:]...)
					if len(rest) > 0 && tb.late2(r, k, k+l+1) {
						refused++
						if w.build(r.v, rest) != nil {
							t.Fatalf("round %d: %v without %d stops from %d refused, build takes it", round, r.stops, l, k)
						}
					}
					for i := 0; i <= len(r2.stops); i++ {
						if !tb.lateWith(r2, seg, i) {
							continue
						}
						refused++
						with := append(append(append([]int32(nil), r2.stops[:i]...), seg...), r2.stops[i:]...)
						if w.build(r2.v, with) != nil {
							t.Fatalf("round %d: %v with %v after %d refused, build takes it", round, r2.stops, seg, i)
						}
					}
				}
			}
		}
	}
	if refused < 100 {
		t.Fatalf("%d refusals: too few to tell", refused)
	}
}
