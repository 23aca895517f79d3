package sqlite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fleethub/fleethub/internal/spool"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlstore"
)

// Parked webhook deliveries (store.Delivery Park) are kept in a spool
// (internal/spool) in the data directory's parked/ folder, a file per
// stream, rather than in a table: parking is one write of a batch at
// the end of its stream's file, with no page of the database to read or
// write. A receiver that takes nothing costs its neighbours that write
// and nothing else. UnparkDeliveries moves them into the queue.

// ms and fromMS are the store's time encoding (sqlstore.MS, FromMS).
var ms, fromMS = sqlstore.MS, sqlstore.FromMS

// parkedDir is the spool's folder in the data directory.
const parkedDir = "parked"

// parkedVersion is the first byte of an encoded parked delivery.
const parkedVersion = 1

// parking is the spool of parked deliveries.
type parking struct {
	sp *spool.Spool
	mu sync.Mutex // one unpark at a time (a peek and its consume), and no count during one
}

// encodeParked encodes what a parked delivery keeps: its identity,
// payload and times (it has never been attempted).
func encodeParked(d store.Delivery) []byte {
	b := make([]byte, 0, 64+len(d.ID)+len(d.Org)+len(d.Env)+len(d.StreamID)+len(d.Payload))
	b = append(b, parkedVersion)
	for _, s := range []string{d.ID, d.Org, d.Env, d.StreamID} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, n := range []int64{d.Offset, ms(d.NextAttemptAt), ms(d.QueuedAt), ms(d.CreatedAt)} {
		b = binary.AppendVarint(b, n)
	}
	return append(b, d.Payload...)
}

// errParked is a parked record that does not decode.
var errParked = errors.New("sqlite: bad parked delivery record")

// decodeParked is encodeParked's inverse.
func decodeParked(b []byte) (store.Delivery, error) {
	var d store.Delivery
	if len(b) == 0 || b[0] != parkedVersion {
		return d, fmt.Errorf("%w: version", errParked)
	}
	b = b[1:]
	var strs [4]string
	for i := range strs {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return d, fmt.Errorf("%w: field %d", errParked, i)
		}
		strs[i] = string(b[k : k+int(n)])
		b = b[k+int(n):]
	}
	var nums [4]int64
	for i := range nums {
		n, k := binary.Varint(b)
		if k <= 0 {
			return d, fmt.Errorf("%w: number %d", errParked, i)
		}
		nums[i] = n
		b = b[k:]
	}
	d.ID, d.Org, d.Env, d.StreamID = strs[0], strs[1], strs[2], strs[3]
	if d.ID == "" || d.StreamID == "" {
		return d, fmt.Errorf("%w: no id", errParked)
	}
	d.Offset, d.NextAttemptAt, d.QueuedAt, d.CreatedAt = nums[0], fromMS(nums[1]), fromMS(nums[2]), fromMS(nums[3])
	d.Payload = append([]byte(nil), b...)
	return d, nil
}

// openParked opens the spool of parked deliveries.
func (s *Store) openParked(cfg Config) error {
	sp, err := spool.Open(filepath.Join(cfg.Dir, parkedDir))
	if err != nil {
		return fmt.Errorf("sqlite: open parked: %w", err)
	}
	s.parked = &parking{sp: sp}
	return nil
}

// park appends deliveries to their streams' spool files, a write per
// stream.
func (s *Store) park(ds []store.Delivery) error {
	by := map[string][][]byte{}
	var order []string
	for _, d := range ds {
		if _, ok := by[d.StreamID]; !ok {
			order = append(order, d.StreamID)
		}
		by[d.StreamID] = append(by[d.StreamID], encodeParked(d))
	}
	for _, id := range order {
		if err := s.parked.sp.Append(id, by[id]...); err != nil {
			return fmt.Errorf("sqlite: park deliveries: %w", err)
		}
	}
	return nil
}

// ParkedStreams lists the streams with parked deliveries.
func (s *Store) ParkedStreams(context.Context) ([]string, error) {
	return s.parked.sp.Keys(), nil
}

// ListParkedDeliveries pages a stream's parked deliveries of the scope,
// newest first. A position is a record's place in the stream's spool
// file (spool.View EachAt) plus one; the file is read from its oldest
// record up to before, keeping the newest limit+1 in scope, without the
// spool's lock.
func (s *Store) ListParkedDeliveries(_ context.Context, sc store.Scope, streamID string, before int64, limit int) ([]store.Delivery, int64, error) {
	if limit <= 0 {
		return nil, 0, nil
	}
	v, err := s.parked.sp.View(streamID)
	if err != nil || v == nil {
		return nil, 0, wrapParked("list parked deliveries", err)
	}
	defer v.Close()
	type rec struct {
		at int64
		b  []byte
	}
	ring := make([]rec, limit+1) // the newest limit+1 read, ring[n%len] the latest
	n := 0
	var bad error
	err = v.EachAt(func(at int64, b []byte) bool {
		if before > 0 && at+1 >= before {
			return false
		}
		if n == 0 {
			// every delivery of a stream has its scope: the oldest tells it
			_, org, env, ok := parkedIdentity(b)
			if !ok {
				bad = fmt.Errorf("%w in the spool of %s", errParked, streamID)
				return false
			}
			if org != sc.Org || env != sc.Env {
				return false
			}
		}
		ring[n%len(ring)] = rec{at + 1, b}
		n++
		return true
	})
	if err = errors.Join(err, bad); err != nil {
		return nil, 0, wrapParked("list parked deliveries", err)
	}
	count := min(n, limit)
	out := make([]store.Delivery, count)
	for i := range count {
		r := ring[(n-1-i)%len(ring)]
		d, err := decodeParked(r.b)
		if err != nil {
			return nil, 0, wrapParked("list parked deliveries of "+streamID, err)
		}
		d.Status, d.Park = store.DeliveryPending, true
		out[i] = d
	}
	var next int64
	if n > limit {
		next = ring[(n-limit)%len(ring)].at
	}
	return out, next, nil
}

// wrapParked wraps a spool error with what was being done; nil stays nil.
func wrapParked(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// parkedLen counts a stream's parked deliveries of the scope; parked.mu
// must be held. The spool is keyed by stream id alone: its oldest record
// tells the stream's scope (every delivery of a stream has its scope).
func (s *Store) parkedLen(sc store.Scope, streamID string) (int64, error) {
	n := s.parked.sp.Len(streamID)
	if n == 0 {
		return 0, nil
	}
	recs, _, err := s.parked.sp.Peek(streamID, 1)
	if err != nil {
		return 0, fmt.Errorf("sqlite: count parked deliveries: %w", err)
	}
	if len(recs) == 0 {
		return 0, nil
	}
	_, org, env, ok := parkedIdentity(recs[0])
	if !ok {
		return 0, fmt.Errorf("sqlite: count parked deliveries: %w in the spool of %s", errParked, streamID)
	}
	if org != sc.Org || env != sc.Env {
		return 0, nil
	}
	return int64(n), nil
}

// UnparkDeliveries moves a stream's oldest parked deliveries into the
// queue: they are enqueued (known ids skipped, a disabled stream's stored
// disabled), then consumed from the spool. A crash in between moves them
// again, and the enqueue skips what it already has.
func (s *Store) UnparkDeliveries(ctx context.Context, streamID string, limit int) (int64, error) {
	s.parked.mu.Lock()
	defer s.parked.mu.Unlock()
	recs, mark, err := s.parked.sp.Peek(streamID, limit)
	if err != nil {
		return 0, fmt.Errorf("sqlite: unpark deliveries: %w", err)
	}
	if len(recs) == 0 {
		return 0, nil
	}
	ds := make([]store.Delivery, len(recs))
	for i, r := range recs {
		if ds[i], err = decodeParked(r); err != nil {
			return 0, fmt.Errorf("sqlite: unpark deliveries of %s: %w", streamID, err)
		}
	}
	if _, err := s.EnqueueDeliveries(ctx, ds); err != nil {
		return 0, err
	}
	if err := s.parked.sp.Consume(streamID, mark); err != nil {
		return 0, fmt.Errorf("sqlite: unpark deliveries: %w", err)
	}
	return int64(len(ds)), nil
}

// RequeueDeliveries requeues as the shared store does and, by ids, finds
// among the stream's parked deliveries the ids the log does not hold:
// they are queued, not sent yet, and go out as they are. The spool is
// looked at as it was before the log: a delivery moved from one to the
// other meanwhile is in the view or in the log, never in neither. The
// view is read only when some ids are still unknown, until all are
// found; it holds no lock while it is read.
func (s *Store) RequeueDeliveries(ctx context.Context, sc store.Scope, streamID string, r store.DeliveryRequeue) (store.DeliveryRequeued, error) {
	if len(r.IDs) == 0 {
		return s.shared.RequeueDeliveries(ctx, sc, streamID, r)
	}
	v, err := s.parked.sp.View(streamID)
	if err != nil {
		return store.DeliveryRequeued{}, fmt.Errorf("sqlite: requeue deliveries: %w", err)
	}
	if v != nil {
		defer v.Close()
	}
	out, err := s.shared.RequeueDeliveries(ctx, sc, streamID, r)
	if err != nil || v == nil || len(out.NotFound) == 0 {
		return out, err
	}
	want := make(map[string]bool, len(out.NotFound))
	for _, id := range out.NotFound {
		want[id] = false
	}
	left := len(want)
	var bad error
	err = v.Each(func(rec []byte) bool {
		id, org, env, ok := parkedIdentity(rec)
		if !ok {
			bad = fmt.Errorf("%w in the spool of %s", errParked, streamID)
			return false
		}
		if found, asked := want[id]; asked && !found && org == sc.Org && env == sc.Env {
			want[id] = true
			left--
		}
		return left > 0
	})
	if err = errors.Join(err, bad); err != nil {
		return store.DeliveryRequeued{}, fmt.Errorf("sqlite: requeue deliveries: %w", err)
	}
	notFound := out.NotFound[:0]
	for _, id := range out.NotFound {
		if want[id] {
			out.Queued = append(out.Queued, id)
		} else {
			notFound = append(notFound, id)
		}
	}
	out.NotFound = notFound
	return out, nil
}

// parkedIdentity reads the id, org and env of an encoded parked delivery
// (encodeParked) without decoding the rest.
func parkedIdentity(b []byte) (id, org, env string, ok bool) {
	if len(b) == 0 || b[0] != parkedVersion {
		return "", "", "", false
	}
	b = b[1:]
	var strs [3]string
	for i := range strs {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return "", "", "", false
		}
		strs[i] = string(b[k : k+int(n)])
		b = b[k+int(n):]
	}
	return strs[0], strs[1], strs[2], true
}
