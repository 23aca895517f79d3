package main

// The generator and the shrinker of the model test (model_test.go).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

var (
	mTypes      = []string{"harsh_braking", "speeding", "door_open", "fuel_low"}
	mCategories = []string{"safety_events", "operational_events", "vehicle_events", "driver_events", "system_events"}
	mSeverities = []string{"low", "medium", "high", "critical"}
	mPriorities = []string{"normal", "urgent", "emergency"}
)

// mSource is a source of a tenant while generating.
type mSource struct {
	vehicle, driver, trip string
	corrs                 []string // correlation ids of this source only (so positions do not depend on how keys interleave)
}

// mPick returns k distinct elements of l (k ≤ len(l)).
func mPick(rng *rand.Rand, l []string, k int) []string {
	p := rng.Perm(len(l))[:k]
	out := make([]string, k)
	for i, j := range p {
		out[i] = l[j]
	}
	return out
}

// genModelWorkload is the workload of a seed: small (2–3 tenants, 3–6 sources,
// 5–12 events each, 1–3 phases, 2–4 streams besides the probes).
func genModelWorkload(seed uint64) *mWorkload {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	w := &mWorkload{Seed: seed}
	w.Tenants = []mTenant{{"a", "test"}, {"b", []string{"test", "live"}[rng.IntN(2)]}}
	if rng.IntN(3) == 0 {
		w.Tenants = append(w.Tenants, mTenant{"a", "live"}) // the same organization in its other environment
	}
	nt := len(w.Tenants)
	// sources: the same names in every tenant (ids and vehicles reused by
	// other tenants), spread over tenants
	var srcs [][]mSource = make([][]mSource, nt)
	nsrc := 3 + rng.IntN(4)
	for i := range nsrc {
		t := i % nt
		if i >= nt {
			t = rng.IntN(nt)
		}
		var s mSource
		switch rng.IntN(4) {
		case 0: // a driver's trip: only driver_id and trip_id
			s.driver, s.trip = "d"+strconv.Itoa(1+rng.IntN(2)), "t"+strconv.Itoa(1+rng.IntN(3))
		default:
			s.vehicle = "v" + strconv.Itoa(1+rng.IntN(4))
			if rng.IntN(3) == 0 {
				s.driver = "d" + strconv.Itoa(1+rng.IntN(2))
			}
		}
		dup := false
		for _, o := range srcs[t] {
			if o.vehicle == s.vehicle && (s.vehicle != "" || (o.driver == s.driver && o.trip == s.trip)) {
				dup = true
			}
		}
		if dup {
			continue
		}
		key := s.vehicle
		if key == "" {
			key = s.driver + "-" + s.trip
		}
		for c := range rng.IntN(3) {
			s.corrs = append(s.corrs, fmt.Sprintf("c-%s-%d", key, c))
		}
		srcs[t] = append(srcs[t], s)
	}
	nphases := 1 + rng.IntN(3)
	if rng.IntN(5) > 0 && nphases == 1 {
		nphases = 2
	}
	// per tenant and phase, the events in send order
	perPhase := make([][][]mEvent, nt)
	counter := make([]int, nt)
	for t := range nt {
		perPhase[t] = make([][]mEvent, nphases)
		for _, s := range srcs[t] {
			n := 5 + rng.IntN(8)
			sequenced := rng.IntN(7) > 0
			evs := make([]mEvent, n)
			for i := range evs {
				counter[t]++
				e := mEvent{ID: "e" + strconv.Itoa(counter[t]), Type: mTypes[rng.IntN(len(mTypes))], Category: mCategories[rng.IntN(len(mCategories))],
					Severity: mSeverities[rng.IntN(len(mSeverities))], Priority: mPriorities[rng.IntN(len(mPriorities))],
					Vehicle: s.vehicle, Driver: s.driver, Trip: s.trip, Level: 1 + rng.IntN(5)}
				if sequenced && rng.IntN(12) > 0 {
					e.Seq = int64(i + 1)
				}
				if len(s.corrs) > 0 && rng.IntN(5) < 2 {
					e.Corr = s.corrs[rng.IntN(len(s.corrs))]
				}
				evs[i] = e
			}
			// neighbour swaps
			for range rng.IntN(n/2 + 1) {
				i := rng.IntN(n - 1)
				evs[i], evs[i+1] = evs[i+1], evs[i]
			}
			// phases: contiguous chunks; some events move to a later phase
			// (gaps filled late) or are never sent (gaps never filled)
			cuts := make([]int, nphases-1)
			for i := range cuts {
				cuts[i] = rng.IntN(n + 1)
			}
			slices.Sort(cuts)
			for i, e := range evs {
				p := 0
				for p < len(cuts) && i >= cuts[p] {
					p++
				}
				if i > 0 && rng.IntN(12) == 0 {
					continue // never sent
				}
				if i > 0 && p < nphases-1 && rng.IntN(6) == 0 {
					p += 1 + rng.IntN(nphases-1-p) // sent late
					q := perPhase[t][p]
					at := rng.IntN(len(q) + 1)
					perPhase[t][p] = slices.Insert(q, at, e)
					continue
				}
				perPhase[t][p] = append(perPhase[t][p], e)
			}
		}
	}
	// merge each tenant's sources per phase randomly (keeping each
	// source's order), cut into requests, add copies, interleave tenants
	for p := range nphases {
		var reqs [][]mRequest = make([][]mRequest, nt)
		for t := range nt {
			evs := perPhase[t][p]
			// a random merge: shuffle with each source's order kept
			bySrc := map[string][]mEvent{}
			var order []string
			for _, e := range evs {
				k := e.orderKey()
				if _, ok := bySrc[k]; !ok {
					order = append(order, k)
				}
				bySrc[k] = append(bySrc[k], e)
			}
			var merged []mEvent
			for len(order) > 0 {
				i := rng.IntN(len(order))
				k := order[i]
				merged = append(merged, bySrc[k][0])
				if bySrc[k] = bySrc[k][1:]; len(bySrc[k]) == 0 {
					order = slices.Delete(order, i, i+1)
				}
			}
			if len(merged) == 0 {
				continue
			}
			nreq := 1 + rng.IntN(min(2, len(merged)))
			cuts := rng.Perm(len(merged) - 1)[:nreq-1]
			for i := range cuts {
				cuts[i]++
			}
			slices.Sort(cuts)
			from := 0
			for _, c := range append(cuts, len(merged)) {
				reqs[t] = append(reqs[t], mRequest{Tenant: t, Events: slices.Clone(merged[from:c])})
				from = c
			}
		}
		// copies: within the request, or in a later request of the tenant
		// (this phase's; the later phases get theirs below)
		for t := range nt {
			for ri := range reqs[t] {
				for _, e := range slices.Clone(reqs[t][ri].Events) {
					if rng.IntN(9) > 0 {
						continue
					}
					tr := ri + rng.IntN(len(reqs[t])-ri)
					q := reqs[t][tr].Events
					at := rng.IntN(len(q) + 1)
					if tr == ri { // after the first copy
						first := slices.IndexFunc(q, func(x mEvent) bool { return x.ID == e.ID })
						at = first + 1 + rng.IntN(len(q)-first)
					}
					reqs[t][tr].Events = slices.Insert(q, at, e)
				}
			}
		}
		var phase []mRequest
		for {
			var left []int
			for t := range nt {
				if len(reqs[t]) > 0 {
					left = append(left, t)
				}
			}
			if len(left) == 0 {
				break
			}
			t := left[rng.IntN(len(left))]
			phase = append(phase, reqs[t][0])
			reqs[t] = reqs[t][1:]
		}
		w.Phases = append(w.Phases, phase)
	}
	// copies sent in a later phase (a copy of a released number)
	for p := 1; p < len(w.Phases); p++ {
		for range rng.IntN(3) {
			q := rng.IntN(p)
			if len(w.Phases[q]) == 0 || len(w.Phases[p]) == 0 {
				continue
			}
			from := w.Phases[q][rng.IntN(len(w.Phases[q]))]
			e := from.Events[rng.IntN(len(from.Events))]
			for i, r := range w.Phases[p] {
				if r.Tenant == from.Tenant {
					w.Phases[p][i].Events = slices.Insert(r.Events, rng.IntN(len(r.Events)+1), e)
					break
				}
			}
		}
	}
	// streams
	ns := 2 + rng.IntN(3)
	for range ns {
		s := mStream{Tenant: rng.IntN(nt), Dedup: rng.IntN(2) == 0, Order: rng.IntN(2) == 0, Corr: rng.IntN(2) == 0,
			Webhook: rng.IntN(3) == 0, Batch: rng.IntN(4) == 0}
		var vehicles, drivers []string
		for _, src := range srcs[s.Tenant] {
			if src.vehicle != "" && !slices.Contains(vehicles, src.vehicle) {
				vehicles = append(vehicles, src.vehicle)
			}
			if src.driver != "" && !slices.Contains(drivers, src.driver) {
				drivers = append(drivers, src.driver)
			}
		}
		for range rng.IntN(3) {
			switch rng.IntN(7) {
			case 0:
				s.Filter.Categories = mPick(rng, mCategories, 1+rng.IntN(3))
			case 1:
				s.Filter.Severities = mPick(rng, mSeverities, 1+rng.IntN(3))
			case 2:
				s.Filter.Priorities = mPick(rng, mPriorities, 1+rng.IntN(2))
			case 3:
				if len(vehicles) > 0 {
					s.Filter.Vehicles = mPick(rng, vehicles, 1+rng.IntN(len(vehicles)))
				}
			case 4:
				if len(drivers) > 0 {
					s.Filter.Drivers = mPick(rng, drivers, 1)
				}
			case 5:
				s.Filter.Types = mPick(rng, mTypes, 1+rng.IntN(3))
			case 6:
				s.Filter.MinLevel = 2 + rng.IntN(3)
			}
		}
		w.Streams = append(w.Streams, s)
	}
	return mNormalize(w)
}

// mNormalize drops empty requests and phases and tenants nothing uses,
// renumbering the rest.
func mNormalize(w *mWorkload) *mWorkload {
	used := make([]bool, len(w.Tenants))
	var phases [][]mRequest
	for _, ph := range w.Phases {
		var out []mRequest
		for _, r := range ph {
			if len(r.Events) > 0 {
				out = append(out, r)
				used[r.Tenant] = true
			}
		}
		if len(out) > 0 {
			phases = append(phases, out)
		}
	}
	for _, s := range w.Streams {
		used[s.Tenant] = true
	}
	re := make([]int, len(w.Tenants))
	var tenants []mTenant
	for i, u := range used {
		re[i] = len(tenants)
		if u {
			tenants = append(tenants, w.Tenants[i])
		}
	}
	out := &mWorkload{Seed: w.Seed, Tenants: tenants}
	for _, s := range w.Streams {
		s.Tenant = re[s.Tenant]
		out.Streams = append(out.Streams, s)
	}
	for _, ph := range phases {
		var np []mRequest
		for _, r := range ph {
			np = append(np, mRequest{Tenant: re[r.Tenant], Events: slices.Clone(r.Events)})
		}
		out.Phases = append(out.Phases, np)
	}
	return out
}

// clone is a deep copy.
func (w *mWorkload) clone() *mWorkload {
	c := &mWorkload{Seed: w.Seed, Tenants: slices.Clone(w.Tenants), Streams: slices.Clone(w.Streams)}
	for _, ph := range w.Phases {
		var np []mRequest
		for _, r := range ph {
			np = append(np, mRequest{Tenant: r.Tenant, Events: slices.Clone(r.Events)})
		}
		c.Phases = append(c.Phases, np)
	}
	return c
}

func (w *mWorkload) events() int {
	n := 0
	for _, ph := range w.Phases {
		for _, r := range ph {
			n += len(r.Events)
		}
	}
	return n
}

func (w *mWorkload) requests() int {
	n := 0
	for _, ph := range w.Phases {
		n += len(ph)
	}
	return n
}

// withoutEvents drops the events whose flat index (over phases, requests,
// events) is in [from, to).
func (w *mWorkload) withoutEvents(from, to int) *mWorkload {
	c := w.clone()
	i := 0
	for p := range c.Phases {
		for r := range c.Phases[p] {
			var keep []mEvent
			for _, e := range c.Phases[p][r].Events {
				if i < from || i >= to {
					keep = append(keep, e)
				}
				i++
			}
			c.Phases[p][r].Events = keep
		}
	}
	return mNormalize(c)
}

// mShrinkCandidates are the smaller workloads tried from w, biggest cuts
// first: streams, phases, requests, chunks of events (ddmin granularity
// n), then simpler streams.
func mShrinkCandidates(w *mWorkload, n int) []*mWorkload {
	var out []*mWorkload
	for i := range w.Streams {
		c := w.clone()
		c.Streams = slices.Delete(c.Streams, i, i+1)
		out = append(out, mNormalize(c))
	}
	if len(w.Phases) > 1 {
		for p := range w.Phases {
			c := w.clone()
			c.Phases = slices.Delete(c.Phases, p, p+1)
			out = append(out, mNormalize(c))
		}
		for p := 0; p+1 < len(w.Phases); p++ { // two phases as one
			c := w.clone()
			c.Phases[p] = append(c.Phases[p], c.Phases[p+1]...)
			c.Phases = slices.Delete(c.Phases, p+1, p+2)
			out = append(out, mNormalize(c))
		}
	}
	if w.requests() > 1 {
		for p := range w.Phases {
			for r := range w.Phases[p] {
				c := w.clone()
				c.Phases[p] = slices.Delete(c.Phases[p], r, r+1)
				out = append(out, mNormalize(c))
			}
		}
	}
	total := w.events()
	n = min(max(n, 2), total)
	for k := range n {
		from, to := k*total/n, (k+1)*total/n
		if to > from {
			out = append(out, w.withoutEvents(from, to))
		}
	}
	for i, s := range w.Streams {
		simpler := []mStream{}
		if s.Webhook {
			simpler = append(simpler, mStream{Tenant: s.Tenant, Filter: s.Filter, Dedup: s.Dedup, Order: s.Order, Corr: s.Corr, Batch: s.Batch})
		}
		if s.Batch {
			x := s
			x.Batch = false
			simpler = append(simpler, x)
		}
		if s.Filter.Categories != nil || s.Filter.Severities != nil || s.Filter.Priorities != nil || s.Filter.Vehicles != nil ||
			s.Filter.Drivers != nil || s.Filter.Types != nil || s.Filter.MinLevel != 0 {
			x := s
			x.Filter = mFilter{}
			simpler = append(simpler, x)
		}
		for _, x := range simpler {
			c := w.clone()
			c.Streams[i] = x
			out = append(out, c)
		}
	}
	return out
}

// mShrink reduces w while fails says it still fails, within budget. It
// tries up to par candidates at once and keeps the first (in candidate
// order) that fails.
func mShrink(ctx context.Context, w *mWorkload, budget time.Duration, par int, fails func(context.Context, *mWorkload) bool) (*mWorkload, int) {
	deadline := time.Now().Add(budget)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	tries := 0
	n := 2
	for time.Now().Before(deadline) {
		cands := mShrinkCandidates(w, n)
		var next *mWorkload
		for i := 0; i < len(cands) && next == nil && time.Now().Before(deadline); i += par {
			group := cands[i:min(i+par, len(cands))]
			res := make([]bool, len(group))
			done := make(chan int, len(group))
			for j, c := range group {
				go func() {
					res[j] = fails(ctx, c)
					done <- j
				}()
			}
			for range group {
				<-done
			}
			tries += len(group)
			if ctx.Err() != nil {
				break // a run cut by the deadline proves nothing
			}
			for j, f := range res {
				if f {
					next = group[j]
					break
				}
			}
		}
		if next == nil {
			if n >= w.events() {
				break
			}
			n = min(2*n, w.events())
			continue
		}
		w = next
		n = max(n-1, 2)
	}
	return w, tries
}
