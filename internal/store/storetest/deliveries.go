package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// deliveriesOf returns the backend's store.Deliveries; backends that
// lack it fail the contract.
func deliveriesOf(t *testing.T, open Opener) store.Deliveries {
	t.Helper()
	b := open(t)
	d, ok := b.(store.Deliveries)
	if !ok {
		t.Fatalf("%T does not implement store.Deliveries", b)
	}
	return d
}

var dscope = store.Scope{Org: "org-d", Env: "live"}

// newDelivery makes a delivery of stream at offset, created at base+offset ms.
func newDelivery(sc store.Scope, stream string, offset int64) store.Delivery {
	at := base.Add(time.Duration(offset) * time.Millisecond)
	return store.Delivery{
		ID: fmt.Sprintf("msg_%s_%d", stream, offset), Org: sc.Org, Env: sc.Env, StreamID: stream, Offset: offset,
		Payload:       fmt.Appendf(nil, `{"stream_id":%q,"offset":%d,"message":{"n":%d}}`, stream, offset, offset),
		NextAttemptAt: at, QueuedAt: at, CreatedAt: at,
	}
}

func enqueue(t *testing.T, s store.Deliveries, ds ...store.Delivery) []store.Delivery {
	t.Helper()
	got, err := s.EnqueueDeliveries(t.Context(), ds)
	if err != nil {
		t.Fatalf("EnqueueDeliveries: %v", err)
	}
	return got
}

func deliveryIDs(ds []store.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func listAll(t *testing.T, s store.Deliveries, sc store.Scope, stream, status string) []store.Delivery {
	t.Helper()
	ds, _, err := s.ListDeliveries(t.Context(), sc, stream, store.DeliveryQuery{Status: status, Limit: 1000})
	if err != nil {
		t.Fatalf("ListDeliveries: %v", err)
	}
	return ds
}

func byID(t *testing.T, s store.Deliveries, sc store.Scope, stream, id string) store.Delivery {
	t.Helper()
	for _, d := range listAll(t, s, sc, stream, "") {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("delivery %s not listed", id)
	return store.Delivery{}
}

func counts(t *testing.T, s store.Deliveries, sc store.Scope, stream string) map[string]int64 {
	t.Helper()
	c, err := s.CountDeliveries(t.Context(), sc, stream)
	if err != nil {
		t.Fatalf("CountDeliveries: %v", err)
	}
	return c
}

func claim(t *testing.T, s store.Deliveries, owner string, now time.Time, limit int, streams ...string) []store.Delivery {
	t.Helper()
	got, err := s.ClaimDeliveries(t.Context(), store.DeliveryClaim{Owner: owner, StreamIDs: streams, Now: now, Until: now.Add(time.Minute), Limit: limit})
	if err != nil {
		t.Fatalf("ClaimDeliveries: %v", err)
	}
	return got
}

// deliveries is the contract of store.Deliveries.
func deliveries(t *testing.T, open Opener) {
	t.Run("EnqueueIsIdempotent", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		a, b, c := newDelivery(dscope, "s1", 1), newDelivery(dscope, "s1", 2), newDelivery(dscope, "s1", 3)
		if got := enqueue(t, s, a, b); !slices.Equal(deliveryIDs(got), []string{a.ID, b.ID}) || got[0].Status != store.DeliveryPending || got[0].Seq == 0 {
			t.Fatalf("first enqueue returned %+v", got)
		}
		// a re-sent batch (same ids) inserts only what is new
		if got := enqueue(t, s, a, b, c, c); !slices.Equal(deliveryIDs(got), []string{c.ID}) {
			t.Fatalf("second enqueue inserted %v, want only %s", deliveryIDs(got), c.ID)
		}
		if n := counts(t, s, dscope, "s1"); n[store.DeliveryPending] != 3 || n[store.DeliveryDelivered] != 0 || len(n) != len(store.DeliveryStatuses) {
			t.Fatalf("counts %v, want 3 pending and every status present", n)
		}
		d := byID(t, s, dscope, "s1", b.ID)
		if d.Offset != 2 || string(d.Payload) != string(b.Payload) || !d.CreatedAt.Equal(storedTime(b.CreatedAt)) || d.CreatedAt.Location() != time.UTC ||
			d.Attempts != 0 || d.StreamID != "s1" || d.Org != dscope.Org {
			t.Errorf("stored %+v, want %+v", d, b)
		}
	})

	t.Run("ParkThenUnpark", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		known := newDelivery(dscope, "s1", 1)
		enqueue(t, s, known)
		parked := []store.Delivery{known, newDelivery(dscope, "s1", 2), newDelivery(dscope, "s1", 3), newDelivery(dscope, "s2", 4)}
		for i := range parked {
			parked[i].Park = true
		}
		if _, err := s.EnqueueDeliveries(t.Context(), append(parked, newDelivery(dscope, "s3", 5))); err != nil {
			t.Fatalf("EnqueueDeliveries: %v", err)
		}
		if got := listAll(t, s, dscope, "s3", ""); len(got) != 1 {
			t.Fatalf("s3 lists %d deliveries, want its one unparked delivery at once", len(got))
		}
		// durable and counted as pending at once (known ids aside, on a
		// backend that enqueues directly)
		if n := counts(t, s, dscope, "s1")[store.DeliveryPending]; n != 3 && n != 4 {
			t.Fatalf("s1 counts %d pending after parking, want 3 (enqueued directly) or 4 (parked, not yet deduplicated)", n)
		}
		// s2's endpoint is disabled meanwhile: its parked delivery arrives disabled
		if _, err := s.DisableDeliveries(t.Context(), dscope, "s2", "https://example.com/gone", "410 Gone", base); err != nil {
			t.Fatalf("DisableDeliveries: %v", err)
		}
		streams, err := s.ParkedStreams(t.Context())
		if err != nil {
			t.Fatalf("ParkedStreams: %v", err)
		}
		if len(streams) != 0 && (len(streams) != 2 || !slices.Contains(streams, "s1") || !slices.Contains(streams, "s2")) {
			t.Fatalf("ParkedStreams = %v, want s1 and s2 (or none on a backend that does not park)", streams)
		}
		for _, id := range streams {
			for {
				n, err := s.UnparkDeliveries(t.Context(), id, 2)
				if err != nil {
					t.Fatalf("UnparkDeliveries: %v", err)
				}
				if n == 0 {
					break
				}
			}
		}
		if streams, err := s.ParkedStreams(t.Context()); err != nil || len(streams) != 0 {
			t.Fatalf("ParkedStreams after unparking = %v, %v; want none", streams, err)
		}
		got := listAll(t, s, dscope, "s1", "")
		if ids := deliveryIDs(got); len(ids) != 3 || !slices.Contains(ids, parked[1].ID) || !slices.Contains(ids, parked[2].ID) {
			t.Fatalf("s1 lists %v after unparking, want %s once and both parked ones", ids, known.ID)
		}
		if n := counts(t, s, dscope, "s1"); n[store.DeliveryPending] != 3 {
			t.Errorf("s1 counts %v, want 3 pending", n)
		}
		d := byID(t, s, dscope, "s1", parked[2].ID)
		if d.Status != store.DeliveryPending || d.Offset != 3 || string(d.Payload) != string(parked[2].Payload) || d.LeaseOwner != "" {
			t.Errorf("unparked %+v, want pending, unleased, offset 3 and its payload", d)
		}
		if c := claim(t, s, "n1", base.Add(time.Hour), 10, "s1"); len(c) != 3 {
			t.Errorf("claimed %d of s1's 3 deliveries", len(c))
		}
		if got := listAll(t, s, dscope, "s2", ""); len(got) != 1 || got[0].Status != store.DeliveryDisabled {
			t.Errorf("s2 lists %+v, want its one delivery disabled", got)
		}
	})

	t.Run("ClaimLeasesDueRows", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		var ds []store.Delivery
		for i := int64(1); i <= 5; i++ {
			ds = append(ds, newDelivery(dscope, "s1", i))
		}
		later := newDelivery(dscope, "s1", 6)
		later.NextAttemptAt = base.Add(time.Hour)
		other := newDelivery(dscope, "s2", 1)
		enqueue(t, s, append(ds, later, other)...)
		now := base.Add(time.Second)
		got := claim(t, s, "n1", now, 2, "s1")
		if !slices.Equal(deliveryIDs(got), []string{ds[0].ID, ds[1].ID}) || got[0].LeaseOwner != "n1" || !got[0].LeaseUntil.Equal(storedTime(now.Add(time.Minute))) {
			t.Fatalf("claim of 2 = %+v, want the two oldest leased to n1", got)
		}
		got = claim(t, s, "n2", now, 10, "s1")
		if !slices.Equal(deliveryIDs(got), []string{ds[2].ID, ds[3].ID, ds[4].ID}) {
			t.Fatalf("second claimer got %v, want the three unleased due rows", deliveryIDs(got))
		}
		if got := claim(t, s, "n3", now, 10, "s1"); len(got) != 0 {
			t.Fatalf("everything due is leased, yet claimed %v", deliveryIDs(got))
		}
		// leases expire
		if got := claim(t, s, "n3", now.Add(2*time.Minute), 10, "s1"); len(got) != 5 {
			t.Fatalf("after lease expiry claimed %v, want the 5 rows", deliveryIDs(got))
		}
		// the rows of s1 are leased again until now+3m; later is due at base+1h
		if got := claim(t, s, "n4", now.Add(2*time.Minute), 10, "s1", "s2"); !slices.Equal(deliveryIDs(got), []string{other.ID}) {
			t.Fatalf("claim across streams = %v, want only %s", deliveryIDs(got), other.ID)
		}
		if got := claim(t, s, "n4", base.Add(time.Hour), 10, "s1"); !slices.Equal(deliveryIDs(got), append(deliveryIDs(ds), later.ID)) {
			t.Fatalf("claim after the leases and the delay = %v, want every s1 row by due time", deliveryIDs(got))
		}
	})

	t.Run("ConcurrentClaimersNeverShare", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		var ds []store.Delivery
		for i := int64(1); i <= 200; i++ {
			ds = append(ds, newDelivery(dscope, fmt.Sprintf("s%d", i%3), i))
		}
		enqueue(t, s, ds...)
		now := base.Add(time.Hour)
		var mu sync.Mutex
		seen := map[string]string{}
		var wg sync.WaitGroup
		for w := range 6 {
			owner := fmt.Sprintf("n%d", w)
			wg.Go(func() {
				for {
					got, err := s.ClaimDeliveries(t.Context(), store.DeliveryClaim{Owner: owner, StreamIDs: []string{"s0", "s1", "s2"}, Now: now, Until: now.Add(time.Minute), Limit: 7})
					if err != nil {
						t.Errorf("ClaimDeliveries: %v", err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, d := range got {
						if prev, dup := seen[d.ID]; dup {
							t.Errorf("%s claimed by %s and %s", d.ID, prev, owner)
						}
						seen[d.ID] = owner
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != 200 {
			t.Errorf("%d rows claimed, want 200", len(seen))
		}
	})

	t.Run("RecordOutcomes", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		a, b, c := newDelivery(dscope, "s1", 1), newDelivery(dscope, "s1", 2), newDelivery(dscope, "s1", 3)
		enqueue(t, s, a, b, c)
		now := base.Add(time.Second)
		claim(t, s, "n1", now, 10, "s1")
		next := now.Add(30 * time.Second)
		err := s.RecordDeliveries(t.Context(), "n1", []store.DeliveryResult{
			{ID: a.ID, Status: store.DeliveryDelivered, Attempted: true, StatusCode: 204, LatencyMS: 12, At: now},
			{ID: b.ID, Status: store.DeliveryFailed, Attempted: true, NextAttemptAt: next, StatusCode: 503, Error: "HTTP 503", LatencyMS: 40},
		})
		if err != nil {
			t.Fatalf("RecordDeliveries: %v", err)
		}
		// not the lease holder: ignored
		if err := s.RecordDeliveries(t.Context(), "n2", []store.DeliveryResult{{ID: c.ID, Status: store.DeliveryDelivered, Attempted: true, At: now}}); err != nil {
			t.Fatalf("RecordDeliveries by a stranger: %v", err)
		}
		da, db, dc := byID(t, s, dscope, "s1", a.ID), byID(t, s, dscope, "s1", b.ID), byID(t, s, dscope, "s1", c.ID)
		if da.Status != store.DeliveryDelivered || da.Attempts != 1 || da.LastStatusCode != 204 || da.LastLatencyMS != 12 ||
			!da.DeliveredAt.Equal(storedTime(now)) || da.LeaseOwner != "" || !da.LeaseUntil.IsZero() {
			t.Errorf("delivered row %+v", da)
		}
		if db.Status != store.DeliveryFailed || db.Attempts != 1 || db.LastStatusCode != 503 || db.LastError != "HTTP 503" ||
			!db.NextAttemptAt.Equal(storedTime(next)) || !db.DeliveredAt.IsZero() || db.LeaseOwner != "" {
			t.Errorf("failed row %+v", db)
		}
		if dc.Status != store.DeliveryPending || dc.Attempts != 0 || dc.LeaseOwner != "n1" {
			t.Errorf("row recorded by a non-holder changed: %+v", dc)
		}
		// a delivered row is final: recording again changes nothing
		if err := s.RecordDeliveries(t.Context(), "", []store.DeliveryResult{{ID: a.ID, Status: store.DeliveryFailed, Attempted: true}}); err != nil {
			t.Fatal(err)
		}
		if d := byID(t, s, dscope, "s1", a.ID); d.Status != store.DeliveryDelivered || d.Attempts != 1 {
			t.Errorf("delivered row rewritten: %+v", d)
		}
		// the failed row is claimable when due, not before
		if got := claim(t, s, "n2", next.Add(-time.Millisecond), 10, "s1"); len(got) != 0 {
			t.Errorf("claimed %v before it was due", deliveryIDs(got))
		}
		if got := claim(t, s, "n2", next, 10, "s1"); !slices.Equal(deliveryIDs(got), []string{b.ID}) || got[0].Attempts != 1 {
			t.Errorf("due retry claim = %+v", got)
		}
	})

	t.Run("RecordWithoutAttempt", func(t *testing.T) {
		// an outcome without an attempt (the stream no longer delivers by
		// webhook) keeps the last attempt's status code and latency, by id
		// and by Seq: it had no answer and took no time
		t.Parallel()
		s := deliveriesOf(t, open)
		e, f := newDelivery(dscope, "s9", 1), newDelivery(dscope, "s9", 2)
		enqueue(t, s, e, f)
		now := base.Add(time.Second)
		claim(t, s, "n1", now, 10, "s9")
		next := now.Add(30 * time.Second)
		failed := func(id string) store.DeliveryResult {
			return store.DeliveryResult{ID: id, Status: store.DeliveryFailed, Attempted: true, NextAttemptAt: next, StatusCode: 503, Error: "HTTP 503", LatencyMS: 40}
		}
		if err := s.RecordDeliveries(t.Context(), "n1", []store.DeliveryResult{failed(e.ID), failed(f.ID)}); err != nil {
			t.Fatal(err)
		}
		got := claim(t, s, "n2", next, 10, "s9")
		seqs := map[string]int64{}
		for _, d := range got {
			seqs[d.ID] = d.Seq
		}
		if err := s.RecordDeliveries(t.Context(), "n2", []store.DeliveryResult{
			{ID: e.ID, Status: store.DeliveryDeadLettered, Error: "gone", At: next},
			{ID: f.ID, Seq: seqs[f.ID], Status: store.DeliveryDeadLettered, Error: "gone", At: next},
		}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{e.ID, f.ID} {
			if d := byID(t, s, dscope, "s9", id); d.Status != store.DeliveryDeadLettered || d.Attempts != 1 || d.LastStatusCode != 503 || d.LastLatencyMS != 40 || d.LastError != "gone" {
				t.Errorf("dead-lettered without an attempt: %+v, want the last attempt's code and latency kept", d)
			}
		}
	})

	t.Run("RecordBySeq", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		a, b := newDelivery(dscope, "s1", 1), newDelivery(dscope, "s1", 2)
		enqueue(t, s, a, b)
		now := base.Add(time.Second)
		got := claim(t, s, "n1", now, 10, "s1")
		if len(got) != 2 || got[0].Seq == 0 || got[1].Seq == 0 {
			t.Fatalf("claimed %+v, want both with their Seq", got)
		}
		// an outcome naming b's id with a's Seq never touches a (a backend
		// that finds rows by Seq still checks the id)
		err := s.RecordDeliveries(t.Context(), "n1", []store.DeliveryResult{{ID: b.ID, Seq: got[0].Seq, Status: store.DeliveryDeadLettered, Attempted: true, StatusCode: 400, At: now}})
		if err != nil {
			t.Fatalf("RecordDeliveries: %v", err)
		}
		if d := byID(t, s, dscope, "s1", a.ID); d.Status != store.DeliveryPending || d.Attempts != 0 || d.LeaseOwner != "n1" {
			t.Errorf("a changed by an outcome naming b: %+v", d)
		}
		err = s.RecordDeliveries(t.Context(), "n1", []store.DeliveryResult{{ID: a.ID, Seq: got[0].Seq, Status: store.DeliveryDelivered, Attempted: true, StatusCode: 200, At: now}})
		if err != nil {
			t.Fatalf("RecordDeliveries: %v", err)
		}
		if d := byID(t, s, dscope, "s1", a.ID); d.Status != store.DeliveryDelivered || d.Attempts != 1 || d.LastStatusCode != 200 || d.LeaseOwner != "" {
			t.Errorf("row recorded with its Seq: %+v", d)
		}
	})

	t.Run("RenewAndRelease", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		a, b := newDelivery(dscope, "s1", 1), newDelivery(dscope, "s1", 2)
		enqueue(t, s, a, b)
		now := base.Add(time.Second)
		claim(t, s, "n1", now, 1, "s1") // a
		lost, err := s.RenewDeliveryLeases(t.Context(), "n1", []string{a.ID, b.ID}, now.Add(time.Hour))
		if err != nil {
			t.Fatalf("RenewDeliveryLeases: %v", err)
		}
		if !slices.Equal(lost, []string{b.ID}) {
			t.Errorf("lost = %v, want [%s] (never held)", lost, b.ID)
		}
		if d := byID(t, s, dscope, "s1", a.ID); !d.LeaseUntil.Equal(storedTime(now.Add(time.Hour))) {
			t.Errorf("lease not renewed: %v", d.LeaseUntil)
		}
		if got := claim(t, s, "n2", now.Add(2*time.Minute), 10, "s1"); !slices.Equal(deliveryIDs(got), []string{b.ID}) {
			t.Errorf("renewed lease was claimed: %v", deliveryIDs(got))
		}
		next := now.Add(5 * time.Minute)
		if err := s.ReleaseDeliveries(t.Context(), "n1", []string{a.ID, b.ID}, next); err != nil {
			t.Fatalf("ReleaseDeliveries: %v", err)
		}
		da, db := byID(t, s, dscope, "s1", a.ID), byID(t, s, dscope, "s1", b.ID)
		if da.LeaseOwner != "" || !da.NextAttemptAt.Equal(storedTime(next)) || da.Attempts != 0 {
			t.Errorf("released row %+v", da)
		}
		if db.LeaseOwner != "n2" {
			t.Errorf("release by n1 touched n2's lease: %+v", db)
		}
	})

	// One node renewing its leases while it records outcomes and
	// releases deliveries, over the same rows: each statement locks the
	// rows it changes in the same order (by id), or two of them, each
	// holding rows the other wants, deadlock and one fails (PostgreSQL
	// aborts it). The rows are written in an order unlike their ids', as
	// deliveries of many streams arrive, and each call names them shuffled.
	t.Run("RenewBesideRecordAndRelease", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		rng := rand.New(rand.NewPCG(7, 29))
		now := base.Add(time.Hour)
		for round := range 20 {
			stream := fmt.Sprintf("rr%d", round)
			var ds []store.Delivery
			for i := int64(1); i <= 120; i++ {
				ds = append(ds, newDelivery(dscope, stream, i))
			}
			rng.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
			enqueue(t, s, ds...)
			ids := deliveryIDs(claim(t, s, "n1", now, len(ds), stream))
			if len(ids) != len(ds) {
				t.Fatalf("claimed %d of %d", len(ids), len(ds))
			}
			shuffled := func() []string {
				out := slices.Clone(ids)
				rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
				return out
			}
			// half recorded, the other half released, each half named
			// in an order of its own
			renew, record := shuffled(), shuffled()
			release := slices.Clone(record[len(record)/2:])
			rng.Shuffle(len(release), func(i, j int) { release[i], release[j] = release[j], release[i] })
			rs := make([]store.DeliveryResult, 0, len(record)/2)
			for _, id := range record[:len(record)/2] {
				rs = append(rs, store.DeliveryResult{ID: id, Status: store.DeliveryDelivered, Attempted: true, StatusCode: 204, At: now})
			}
			var wg sync.WaitGroup
			wg.Go(func() {
				if _, err := s.RenewDeliveryLeases(t.Context(), "n1", renew, now.Add(time.Hour)); err != nil {
					t.Errorf("RenewDeliveryLeases: %v", err)
				}
			})
			wg.Go(func() {
				if err := s.RecordDeliveries(t.Context(), "n1", rs); err != nil {
					t.Errorf("RecordDeliveries: %v", err)
				}
			})
			wg.Go(func() {
				if err := s.ReleaseDeliveries(t.Context(), "n1", release, now); err != nil {
					t.Errorf("ReleaseDeliveries: %v", err)
				}
			})
			wg.Wait()
			if t.Failed() {
				return
			}
			if c := counts(t, s, dscope, stream); c[store.DeliveryDelivered] != int64(len(rs)) {
				t.Fatalf("round %d: %d delivered, want %d", round, c[store.DeliveryDelivered], len(rs))
			}
		}
	})

	t.Run("ListPagesNewestFirst", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		var ds []store.Delivery
		for i := int64(1); i <= 7; i++ {
			ds = append(ds, newDelivery(dscope, "s1", i))
		}
		enqueue(t, s, ds...)
		now := base.Add(time.Second)
		claim(t, s, "n1", now, 3, "s1")
		if err := s.RecordDeliveries(t.Context(), "n1", []store.DeliveryResult{
			{ID: ds[0].ID, Status: store.DeliveryDeadLettered, Attempted: true, StatusCode: 400},
			{ID: ds[2].ID, Status: store.DeliveryDeadLettered, Attempted: true, StatusCode: 422},
		}); err != nil {
			t.Fatal(err)
		}
		var got []string
		var cursor int64
		for page := 0; ; page++ {
			part, next, err := s.ListDeliveries(t.Context(), dscope, "s1", store.DeliveryQuery{Limit: 3, Before: cursor})
			if err != nil {
				t.Fatalf("ListDeliveries: %v", err)
			}
			got = append(got, deliveryIDs(part)...)
			if next == 0 {
				break
			}
			if page > 5 {
				t.Fatal("paging does not end")
			}
			cursor = next
		}
		want := []string{ds[6].ID, ds[5].ID, ds[4].ID, ds[3].ID, ds[2].ID, ds[1].ID, ds[0].ID}
		if !slices.Equal(got, want) {
			t.Errorf("pages = %v, want %v", got, want)
		}
		part, next, err := s.ListDeliveries(t.Context(), dscope, "s1", store.DeliveryQuery{Status: store.DeliveryDeadLettered, Limit: 1})
		if err != nil || !slices.Equal(deliveryIDs(part), []string{ds[2].ID}) || next == 0 {
			t.Fatalf("dead letters page 1 = %v next %d err %v", deliveryIDs(part), next, err)
		}
		part, next, err = s.ListDeliveries(t.Context(), dscope, "s1", store.DeliveryQuery{Status: store.DeliveryDeadLettered, Limit: 1, Before: next})
		if err != nil || !slices.Equal(deliveryIDs(part), []string{ds[0].ID}) || next != 0 {
			t.Fatalf("dead letters page 2 = %v next %d err %v", deliveryIDs(part), next, err)
		}
		if part, _, err := s.ListDeliveries(t.Context(), store.Scope{Org: "intruder", Env: "live"}, "s1", store.DeliveryQuery{Limit: 10}); err != nil || len(part) != 0 {
			t.Errorf("another scope listed %v", deliveryIDs(part))
		}
		if n := counts(t, s, store.Scope{Org: "intruder", Env: "live"}, "s1"); n[store.DeliveryPending] != 0 {
			t.Errorf("another scope counted %v", n)
		}
	})

	t.Run("Requeue", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		var ds []store.Delivery
		for i := int64(1); i <= 6; i++ {
			ds = append(ds, newDelivery(dscope, "s1", i))
		}
		enqueue(t, s, ds...)
		now := base.Add(time.Second)
		claim(t, s, "n1", now, 6, "s1")
		var rs []store.DeliveryResult
		for _, d := range ds[:5] {
			rs = append(rs, store.DeliveryResult{ID: d.ID, Status: store.DeliveryDeadLettered, Attempted: true, StatusCode: 500, Error: "HTTP 500"})
		}
		if err := s.RecordDeliveries(t.Context(), "n1", rs); err != nil {
			t.Fatal(err)
		}
		other := newDelivery(dscope, "s2", 1) // another stream's
		enqueue(t, s, other)
		later := now.Add(30 * time.Second) // ds[5] is still leased to n1
		got, err := s.RequeueDeliveries(t.Context(), dscope, "s1", store.DeliveryRequeue{
			IDs: []string{"msg_unknown", ds[5].ID, ds[0].ID, other.ID, "msg_unknown", ds[0].ID}, Now: later})
		if err != nil || got.Requeued != 1 {
			t.Fatalf("requeue by ids = %+v, %v; want 1 (the leased one is skipped)", got, err)
		}
		if !slices.Equal(got.NotFound, []string{"msg_unknown", other.ID}) || !slices.Equal(got.InFlight, []string{ds[5].ID}) {
			t.Errorf("requeue by ids: not found %q, in flight %q; want [msg_unknown %s] (each once, in order), [%s]", got.NotFound, got.InFlight, other.ID, ds[5].ID)
		}
		if d := byID(t, s, dscope, "s2", other.ID); d.QueuedAt.Equal(storedTime(later)) {
			t.Errorf("another stream's delivery was requeued: %+v", d)
		}
		// all found and requeued: empty lists, not nil
		got, err = s.RequeueDeliveries(t.Context(), dscope, "s1", store.DeliveryRequeue{IDs: []string{ds[4].ID}, Now: later})
		if err != nil || got.Requeued != 1 || got.NotFound == nil || len(got.NotFound) != 0 || got.InFlight == nil || len(got.InFlight) != 0 || got.Queued == nil || len(got.Queued) != 0 {
			t.Fatalf("requeue of one dead letter = %+v, %v; want 1 and empty lists", got, err)
		}
		d := byID(t, s, dscope, "s1", ds[0].ID)
		if d.Status != store.DeliveryPending || d.Attempts != 0 || !d.NextAttemptAt.Equal(storedTime(later)) || !d.QueuedAt.Equal(storedTime(later)) || d.LastStatusCode != 500 {
			t.Errorf("requeued row %+v", d)
		}
		// time range [created of ds[1], created of ds[3]) holds ds[1], ds[2]
		got, err = s.RequeueDeliveries(t.Context(), dscope, "s1", store.DeliveryRequeue{From: ds[1].CreatedAt, To: ds[3].CreatedAt, Now: later})
		if err != nil || got.Requeued != 2 || got.NotFound != nil || got.InFlight != nil || got.Queued != nil {
			t.Fatalf("requeue by range = %+v, %v; want 2 and no id lists", got, err)
		}
		if got, err := s.RequeueDeliveries(t.Context(), store.Scope{Org: "intruder", Env: "live"}, "s1", store.DeliveryRequeue{IDs: []string{ds[3].ID, ds[5].ID}, Now: later}); err != nil ||
			got.Requeued != 0 || !slices.Equal(got.NotFound, []string{ds[3].ID, ds[5].ID}) || len(got.InFlight) != 0 {
			t.Errorf("another scope: %+v, %v; want nothing requeued, both ids not found", got, err)
		}
		if c := counts(t, s, dscope, "s1"); c[store.DeliveryPending] != 5 || c[store.DeliveryDeadLettered] != 1 {
			t.Errorf("counts after requeue %v, want 5 pending (one leased), 1 dead", c)
		}
	})

	t.Run("RequeueFindsParked", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		logged := newDelivery(dscope, "s1", 1)
		enqueue(t, s, logged)
		parked := []store.Delivery{newDelivery(dscope, "s1", 2), newDelivery(dscope, "s1", 3), newDelivery(dscope, "s2", 4)}
		for i := range parked {
			parked[i].Park = true
		}
		enqueue(t, s, parked...)
		later := base.Add(time.Minute)
		got, err := s.RequeueDeliveries(t.Context(), dscope, "s1", store.DeliveryRequeue{
			IDs: []string{parked[1].ID, "msg_unknown", logged.ID, parked[2].ID, parked[0].ID}, Now: later})
		if err != nil || got.Requeued != 1 {
			t.Fatalf("requeue by ids = %+v, %v; want the logged one requeued", got, err)
		}
		if !slices.Equal(got.Queued, []string{parked[1].ID, parked[0].ID}) || !slices.Equal(got.NotFound, []string{"msg_unknown", parked[2].ID}) || len(got.InFlight) != 0 {
			t.Errorf("requeue by ids: queued %q, not found %q, in flight %q; want s1's parked ones queued, the unknown and s2's not found",
				got.Queued, got.NotFound, got.InFlight)
		}
		if got, err := s.RequeueDeliveries(t.Context(), store.Scope{Org: "intruder", Env: "live"}, "s1", store.DeliveryRequeue{IDs: []string{parked[0].ID}, Now: later}); err != nil ||
			!slices.Equal(got.NotFound, []string{parked[0].ID}) || len(got.Queued) != 0 {
			t.Errorf("another scope: %+v, %v; want the parked id not found", got, err)
		}
		// left as they were: moved into the log once, never attempted
		for {
			n, err := s.UnparkDeliveries(t.Context(), "s1", 10)
			if err != nil {
				t.Fatalf("UnparkDeliveries: %v", err)
			}
			if n == 0 {
				break
			}
		}
		if n := counts(t, s, dscope, "s1"); n[store.DeliveryPending] != 3 {
			t.Errorf("s1 counts %v, want 3 pending", n)
		}
		if d := byID(t, s, dscope, "s1", parked[1].ID); d.Attempts != 0 || !d.QueuedAt.Equal(storedTime(parked[1].QueuedAt)) {
			t.Errorf("unparked %+v, want it as it was parked", d)
		}
	})

	t.Run("ParkedListedNewestFirst", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		enqueue(t, s, newDelivery(dscope, "s1", 1))
		parked := []store.Delivery{newDelivery(dscope, "s1", 2), newDelivery(dscope, "s1", 3), newDelivery(dscope, "s1", 4), newDelivery(dscope, "s2", 5)}
		for i := range parked {
			parked[i].Park = true
		}
		enqueue(t, s, parked...)
		parkedPages := func(sc store.Scope, stream string, limit int) []store.Delivery {
			t.Helper()
			var all []store.Delivery
			var before int64
			for page := 0; ; page++ {
				ds, next, err := s.ListParkedDeliveries(t.Context(), sc, stream, before, limit)
				if err != nil {
					t.Fatalf("ListParkedDeliveries: %v", err)
				}
				if len(ds) > limit || (next != 0 && len(ds) != limit) {
					t.Fatalf("page %d: %d deliveries, next %d, limit %d", page, len(ds), next, limit)
				}
				all = append(all, ds...)
				if next == 0 {
					return all
				}
				if page > 10 {
					t.Fatal("paging does not end")
				}
				before = next
			}
		}
		// what the log lists as pending and what is parked make the
		// pending count, on a backend that parks (3 parked, newest first)
		// as on one that does not (none)
		got, listed := parkedPages(dscope, "s1", 2), int64(len(listAll(t, s, dscope, "s1", store.DeliveryPending)))
		if int64(len(got))+listed != 4 || counts(t, s, dscope, "s1")[store.DeliveryPending] != 4 {
			t.Fatalf("s1: %d listed pending, %d parked; want 4 pending in all", listed, len(got))
		}
		if len(got) > 0 {
			if ids := deliveryIDs(got); !slices.Equal(ids, []string{parked[2].ID, parked[1].ID, parked[0].ID}) {
				t.Fatalf("parked pages = %v, want s1's three newest first", ids)
			}
			d := got[0]
			if !d.Park || d.Status != store.DeliveryPending || d.Attempts != 0 || d.Offset != 4 || d.Org != dscope.Org || d.StreamID != "s1" ||
				string(d.Payload) != string(parked[2].Payload) || !d.CreatedAt.Equal(storedTime(parked[2].CreatedAt)) {
				t.Errorf("parked delivery listed as %+v, want it as parked, pending", d)
			}
			if one := parkedPages(dscope, "s1", 10); len(one) != 3 {
				t.Errorf("one page of 10 lists %d parked deliveries, want 3", len(one))
			}
		}
		if got := parkedPages(store.Scope{Org: "intruder", Env: "live"}, "s1", 10); len(got) != 0 {
			t.Errorf("another scope lists %v of s1's parked deliveries", deliveryIDs(got))
		}
		if n := counts(t, s, store.Scope{Org: "intruder", Env: "live"}, "s1"); n[store.DeliveryPending] != 0 {
			t.Errorf("another scope counts %v of s1's deliveries, want none pending", n)
		}
		if n := counts(t, s, store.Scope{Org: dscope.Org, Env: "test"}, "s2"); n[store.DeliveryPending] != 0 {
			t.Errorf("another environment counts %v of s2's parked deliveries, want none pending", n)
		}
		if got := parkedPages(dscope, "s9", 10); len(got) != 0 {
			t.Errorf("a stream with no deliveries lists %d parked", len(got))
		}
		for {
			moved, err := s.UnparkDeliveries(t.Context(), "s1", 10)
			if err != nil {
				t.Fatalf("UnparkDeliveries: %v", err)
			}
			if moved == 0 {
				break
			}
		}
		if got := parkedPages(dscope, "s1", 10); len(got) != 0 || len(listAll(t, s, dscope, "s1", store.DeliveryPending)) != 4 {
			t.Errorf("after unparking: %d parked, want 0 and all 4 in the log", len(got))
		}
	})

	t.Run("DisableAndEnable", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		a, b, c := newDelivery(dscope, "s1", 1), newDelivery(dscope, "s1", 2), newDelivery(dscope, "s2", 1)
		enqueue(t, s, a, b, c)
		now := base.Add(time.Second)
		claim(t, s, "n1", now, 1, "s1")
		if err := s.RecordDeliveries(t.Context(), "n1", []store.DeliveryResult{{ID: a.ID, Status: store.DeliveryDelivered, Attempted: true, At: now}}); err != nil {
			t.Fatal(err)
		}
		streams, err := s.DeliveryStreams(t.Context(), now, nil)
		if err != nil {
			t.Fatalf("DeliveryStreams: %v", err)
		}
		if len(streams) != 2 || streams[0].StreamID != "s1" || !streams[0].Due || streams[0].Disabled || streams[0].Org != dscope.Org || streams[1].StreamID != "s2" {
			t.Fatalf("DeliveryStreams = %+v, want s1 and s2 due", streams)
		}
		// a stream the caller has no room for is not looked at
		if streams, err = s.DeliveryStreams(t.Context(), now, []string{"s1", "s9"}); err != nil {
			t.Fatal(err)
		}
		if len(streams) != 1 || streams[0].StreamID != "s2" || !streams[0].Due {
			t.Fatalf("DeliveryStreams with s1 full = %+v, want only s2 due", streams)
		}
		n, err := s.DisableDeliveries(t.Context(), dscope, "s1", "https://gone.example/hook", "HTTP 410 Gone", now)
		if err != nil || n != 1 {
			t.Fatalf("DisableDeliveries = %d, %v; want 1 moved", n, err)
		}
		d := newDelivery(dscope, "s1", 3)
		d.LeaseOwner, d.LeaseUntil = "n1", now.Add(time.Minute)
		if got := enqueue(t, s, d); len(got) != 1 || got[0].Status != store.DeliveryDisabled {
			t.Fatalf("enqueue to a disabled stream = %+v, want it stored disabled", got)
		}
		if got := claim(t, s, "n1", now.Add(time.Hour), 10, "s1"); len(got) != 0 {
			t.Errorf("claimed %v of a disabled stream", deliveryIDs(got))
		}
		if streams, err = s.DeliveryStreams(t.Context(), now, []string{"s1"}); err != nil {
			t.Fatal(err)
		}
		if len(streams) != 2 || !streams[0].Disabled || streams[0].Due || streams[0].URL != "https://gone.example/hook" || streams[0].Reason != "HTTP 410 Gone" ||
			!streams[0].DisabledAt.Equal(storedTime(now)) {
			t.Fatalf("DeliveryStreams after disabling = %+v", streams)
		}
		if c := counts(t, s, dscope, "s1"); c[store.DeliveryDisabled] != 2 || c[store.DeliveryDelivered] != 1 {
			t.Errorf("counts %v", c)
		}
		later := now.Add(time.Minute)
		if n, err := s.EnableDeliveries(t.Context(), dscope, "s1", later); err != nil || n != 2 {
			t.Fatalf("EnableDeliveries = %d, %v; want 2", n, err)
		}
		if got := claim(t, s, "n1", later, 10, "s1"); len(got) != 2 || got[0].Status != store.DeliveryPending {
			t.Errorf("after enabling claimed %+v", got)
		}
		if streams, err = s.DeliveryStreams(t.Context(), later, nil); err != nil {
			t.Fatal(err)
		}
		if len(streams) != 1 || streams[0].StreamID != "s2" {
			t.Errorf("DeliveryStreams after enabling = %+v, want only s2", streams)
		}
		// a replay enables too
		if _, err := s.DisableDeliveries(t.Context(), dscope, "s2", "https://x.example", "HTTP 410 Gone", later); err != nil {
			t.Fatal(err)
		}
		if got, err := s.RequeueDeliveries(t.Context(), dscope, "s2", store.DeliveryRequeue{IDs: []string{c.ID}, Now: later}); err != nil || got.Requeued != 1 {
			t.Fatalf("requeue of a disabled delivery = %+v, %v", got, err)
		}
		if streams, err = s.DeliveryStreams(t.Context(), later, nil); err != nil {
			t.Fatal(err)
		}
		if len(streams) != 1 || streams[0].StreamID != "s2" || streams[0].Disabled || !streams[0].Due {
			t.Errorf("DeliveryStreams after replay = %+v, want s2 enabled and due", streams)
		}
	})

	t.Run("Purge", func(t *testing.T) {
		t.Parallel()
		s := deliveriesOf(t, open)
		var ds []store.Delivery
		for i := int64(1); i <= 5; i++ {
			ds = append(ds, newDelivery(dscope, "s1", i))
		}
		enqueue(t, s, ds...)
		now := base.Add(time.Second)
		claim(t, s, "n1", now, 5, "s1")
		var rs []store.DeliveryResult
		for _, d := range ds[:4] {
			rs = append(rs, store.DeliveryResult{ID: d.ID, Status: store.DeliveryDelivered, Attempted: true, At: now})
		}
		if err := s.RecordDeliveries(t.Context(), "n1", rs); err != nil {
			t.Fatal(err)
		}
		// delivered before ds[3] was created: ds[0..2]; at most 2 per call
		n, err := s.PurgeDeliveries(t.Context(), []string{store.DeliveryDelivered}, ds[3].CreatedAt, 2)
		if err != nil || n != 2 {
			t.Fatalf("PurgeDeliveries = %d, %v; want 2", n, err)
		}
		n, err = s.PurgeDeliveries(t.Context(), []string{store.DeliveryDelivered}, ds[3].CreatedAt, 10)
		if err != nil || n != 1 {
			t.Fatalf("second PurgeDeliveries = %d, %v; want 1", n, err)
		}
		if got := deliveryIDs(listAll(t, s, dscope, "s1", "")); !slices.Equal(got, []string{ds[4].ID, ds[3].ID}) {
			t.Errorf("left %v", got)
		}
	})
}
