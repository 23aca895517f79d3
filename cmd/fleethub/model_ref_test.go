package main

// The reference model of the model test (model_test.go): what each events
// stream must deliver for a workload, written from the contract
// (docs/streaming.md "Processing rules" and "Guarantees") and sharing no
// code with the server. It is meant to be read next to the contract:
//
//   - matching: a stream takes the events of its organization and
//     environment (its tenant) that its filter accepts;
//   - deduplication: a deduplicating stream delivers only the first copy of
//     each event_id among the events it matches (copies are identical);
//   - ordering: per tenant and order key (vehicle, else driver|trip) the
//     events with a sequence number ≥ 1 go through one reorder buffer,
//     whatever the filters; a stream with event_ordering delivers the
//     buffer's release order, the others the publication order;
//   - correlation: position = 1 + the copies of the same correlation_id
//     the stream delivered before.
//
// Phases are what makes timing irrelevant: within a phase every request is
// sent in less than a third of the order wait, and the next phase starts
// only after every release the model expects from this one arrived, so
// every gap still open at the end of a phase has been skipped by then.

import (
	"fmt"
	"slices"
	"strconv"
)

// mWorkload is what a seed generates and what a failure prints (JSON).
type mWorkload struct {
	Seed    uint64       `json:"seed"`
	Tenants []mTenant    `json:"tenants"`
	Streams []mStream    `json:"streams"`
	Phases  [][]mRequest `json:"phases"`
}

// mTenant is an organization and environment; Org is a label the run
// makes unique.
type mTenant struct {
	Org string `json:"org"`
	Env string `json:"env"`
}

// mStream is an events stream of a tenant.
type mStream struct {
	Tenant  int     `json:"tenant"`
	Filter  mFilter `json:"filter"`
	Dedup   bool    `json:"dedup,omitempty"`
	Order   bool    `json:"order,omitempty"`
	Corr    bool    `json:"corr,omitempty"`
	Webhook bool    `json:"webhook,omitempty"`
	Batch   bool    `json:"batch,omitempty"`
	Probe   bool    `json:"probe,omitempty"` // added by the harness, see modelStreams
}

// mFilter is a stream's event filter: every non-empty list must contain
// the event's value (a missing vehicle or driver is ""), and MinLevel, when
// set, bounds event_data.level from below.
type mFilter struct {
	Categories []string `json:"categories,omitempty"`
	Severities []string `json:"severities,omitempty"`
	Priorities []string `json:"priorities,omitempty"`
	Vehicles   []string `json:"vehicles,omitempty"`
	Drivers    []string `json:"drivers,omitempty"`
	Types      []string `json:"types,omitempty"`
	MinLevel   int      `json:"min_level,omitempty"`
}

// mRequest is one POST /v1/events of a tenant.
type mRequest struct {
	Tenant int      `json:"tenant"`
	Events []mEvent `json:"events"`
}

// mEvent is an event as sent; copies are equal values.
type mEvent struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Category string `json:"category"`
	Severity string `json:"severity"`
	Priority string `json:"priority"`
	Vehicle  string `json:"vehicle,omitempty"`
	Driver   string `json:"driver,omitempty"`
	Trip     string `json:"trip,omitempty"`
	Seq      int64  `json:"seq,omitempty"`
	Corr     string `json:"corr,omitempty"`
	Level    int    `json:"level"`
}

// orderKey is the key of the reorder buffer (within the tenant).
func (e mEvent) orderKey() string {
	if e.Vehicle != "" {
		return e.Vehicle
	}
	return e.Driver + "|" + e.Trip
}

// partitionKey is the bus key: vehicle, else driver, else trip.
func (e mEvent) partitionKey() string {
	switch {
	case e.Vehicle != "":
		return e.Vehicle
	case e.Driver != "":
		return e.Driver
	}
	return e.Trip
}

// print is what identifies the content of an event beyond its id.
func (e mEvent) print() string {
	return e.Type + "/" + e.Category + "/" + e.Severity + "/" + e.Priority + "/" + e.Vehicle + "/" + e.Driver + "/" + e.Trip + "/" +
		strconv.FormatInt(e.Seq, 10) + "/" + e.Corr + "/" + strconv.Itoa(e.Level)
}

func (f mFilter) match(e mEvent) bool {
	in := func(l []string, v string) bool { return len(l) == 0 || slices.Contains(l, v) }
	return in(f.Categories, e.Category) && in(f.Severities, e.Severity) && in(f.Priorities, e.Priority) &&
		in(f.Vehicles, e.Vehicle) && in(f.Drivers, e.Driver) && in(f.Types, e.Type) && e.Level >= f.MinLevel
}

// mDelivery is one message a stream must deliver.
type mDelivery struct {
	ID    string
	Late  bool
	Pos   int    // correlation position; 0: no enrichment.correlation
	Key   string // the key its order is checked within
	Phase int    // it must have arrived once this phase's wait ended
	// Flushed: released when its phase ended (its gap skipped), not by
	// an arrival; the harness's timing guard looks at the others
	Flushed bool
	Event   mEvent
}

func (d mDelivery) String() string {
	s := d.ID
	if d.Late {
		s += "(late)"
	}
	if d.Pos > 0 {
		s += fmt.Sprintf("@%s#%d", d.Event.Corr, d.Pos)
	}
	return s
}

// mOcc is an event at a point of the publication or release order.
type mOcc struct {
	ev      mEvent
	phase   int
	late    bool
	flushed bool
}

// modelExpect computes, for each of streams, what it must deliver, in its
// delivery order (per key; keys interleave freely).
func modelExpect(w *mWorkload, streams []mStream) [][]mDelivery {
	nt := len(w.Tenants)
	ordering := make([]bool, nt) // the tenant has an ordering stream
	for _, s := range streams {
		if s.Order {
			ordering[s.Tenant] = true
		}
	}
	type keyState struct {
		next int64
		buf  map[int64][]mEvent // seq → the event and its copies, in arrival order
	}
	published := make([][]mOcc, nt)
	released := make([][]mOcc, nt)
	state := make([]map[string]*keyState, nt)
	for i := range state {
		state[i] = map[string]*keyState{}
	}
	for p, phase := range w.Phases {
		for _, r := range phase {
			t := r.Tenant
			for _, e := range r.Events {
				published[t] = append(published[t], mOcc{ev: e, phase: p})
				if !ordering[t] {
					continue
				}
				if e.Seq == 0 { // not ordered: at once
					released[t] = append(released[t], mOcc{ev: e, phase: p})
					continue
				}
				ks := state[t][e.orderKey()]
				if ks == nil { // the first number seen starts the sequence
					ks = &keyState{next: e.Seq, buf: map[int64][]mEvent{}}
					state[t][e.orderKey()] = ks
				}
				switch {
				case e.Seq < ks.next: // its place passed: late, at once
					released[t] = append(released[t], mOcc{ev: e, phase: p, late: true})
				case e.Seq == ks.next:
					released[t] = append(released[t], mOcc{ev: e, phase: p})
					ks.next++
					for len(ks.buf[ks.next]) > 0 { // contiguous successors, copies after their first
						for _, b := range ks.buf[ks.next] {
							released[t] = append(released[t], mOcc{ev: b, phase: p})
						}
						delete(ks.buf, ks.next)
						ks.next++
					}
				default: // behind a gap: waits (a copy joins the waiting number)
					ks.buf[e.Seq] = append(ks.buf[e.Seq], e)
				}
			}
		}
		// the phase ends: every gap still open is skipped, the waiting
		// events go in sequence order
		for t := range state {
			keys := make([]string, 0, len(state[t]))
			for k := range state[t] {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				ks := state[t][k]
				seqs := make([]int64, 0, len(ks.buf))
				for s := range ks.buf {
					seqs = append(seqs, s)
				}
				slices.Sort(seqs)
				for _, s := range seqs {
					for _, b := range ks.buf[s] {
						released[t] = append(released[t], mOcc{ev: b, phase: p, flushed: true})
					}
					ks.next = s + 1
				}
				ks.buf = map[int64][]mEvent{}
			}
		}
	}
	out := make([][]mDelivery, len(streams))
	for i, s := range streams {
		src := published[s.Tenant]
		if s.Order {
			src = released[s.Tenant]
		}
		seen := map[string]bool{}
		positions := map[string]int{}
		for _, o := range src {
			e := o.ev
			if !s.Filter.match(e) {
				continue
			}
			if s.Dedup {
				if seen[e.ID] {
					continue
				}
				seen[e.ID] = true
			}
			d := mDelivery{ID: e.ID, Late: o.late, Phase: o.phase, Flushed: o.flushed, Event: e, Key: e.partitionKey()}
			if s.Order {
				d.Key = e.orderKey()
			}
			if s.Corr && e.Corr != "" {
				positions[e.Corr]++
				d.Pos = positions[e.Corr]
			}
			out[i] = append(out[i], d)
		}
	}
	return out
}
