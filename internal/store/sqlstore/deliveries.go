package sqlstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// The webhook delivery queue (store.Deliveries), but for its two hot
// writes, EnqueueDeliveries and RecordDeliveries, which each backend
// makes its own way: PostgreSQL binds a batch as arrays in one statement,
// SQLite runs a statement prepared on its writer once per row (and parks
// what cannot be sent in a spool rather than in the database).
//
// A claim is one statement: a MATERIALIZED sub-select picks the rows,
// evaluated once (as a plain IN (sub-select) the PostgreSQL planner may
// run it more than once and lease more than asked), and the update leases
// them. On PostgreSQL the pick locks its rows and skips those another
// claim holds, so concurrent claimers on several nodes never wait for
// each other nor get the same row; SQLite's one writer runs claims one
// at a time.

// deliveryCols are the columns of a delivery, in scanDelivery's order.
const deliveryCols = `seq, id, org, env, stream_id, msg_offset, payload, status, attempts, next_attempt_at, queued_at,
	last_status_code, last_error, last_latency_ms, created_at, delivered_at, lease_owner, lease_until`

// Claimable is the condition of a delivery that may be handed out, its
// due time and lease aside.
const Claimable = `status IN ('pending', 'failed')`

// inScope holds when the stream's rows (stream id, org, env) are of the
// scope asked, without reading more than one of them when they are.
const inScope = `EXISTS (SELECT 1 FROM deliveries o WHERE o.stream_id = ? AND o.org = ? AND o.env = ?)`

// OpenStatus is the condition of the index deliveries_open: every status
// but delivered.
const OpenStatus = `status = 'pending' OR status = 'failed' OR status = 'dead_lettered' OR status = 'disabled'`

// scanDelivery reads deliveryCols.
func scanDelivery(row Row) (store.Delivery, error) {
	var d store.Delivery
	var next, queued, created, delivered, lease int64
	if err := row.Scan(&d.Seq, &d.ID, &d.Org, &d.Env, &d.StreamID, &d.Offset, &d.Payload, &d.Status, &d.Attempts, &next, &queued,
		&d.LastStatusCode, &d.LastError, &d.LastLatencyMS, &created, &delivered, &d.LeaseOwner, &lease); err != nil {
		return d, err
	}
	d.NextAttemptAt, d.QueuedAt, d.CreatedAt, d.DeliveredAt, d.LeaseUntil = FromMS(next), FromMS(queued), FromMS(created), FromMS(delivered), FromMS(lease)
	return d, nil
}

// byID is an UPDATE of the deliveries where holds, setting set, that
// locks them in id order before it changes any: every statement that
// changes more than one delivery takes its locks in that order
// (PostgreSQL's RecordDeliveries too), so two of them, one node renewing
// leases while it records outcomes, never each hold a row the other
// waits for. Its arguments are where's, then set's.
func (s *Store) byID(where, set string) string {
	return `WITH l(lid) AS MATERIALIZED (SELECT id FROM deliveries WHERE ` + where + ` ORDER BY id` + s.d.forUpdate + `)
		UPDATE deliveries SET ` + set + ` FROM l WHERE deliveries.id = l.lid`
}

// ClaimDeliveries leases due deliveries of some streams, oldest due first.
func (s *Store) ClaimDeliveries(ctx context.Context, c store.DeliveryClaim) ([]store.Delivery, error) {
	if len(c.StreamIDs) == 0 || c.Limit <= 0 {
		return nil, nil
	}
	in, args := s.d.In("stream_id", c.StreamIDs)
	now := MS(c.Now)
	args = append(args, now, now, c.Limit, c.Owner, MS(c.Until))
	rows, err := s.w.Query(ctx, `WITH c(claimed) AS MATERIALIZED (
			SELECT seq FROM deliveries WHERE `+in+` AND `+Claimable+` AND next_attempt_at <= ? AND lease_until < ?
			ORDER BY next_attempt_at, seq LIMIT ?`+s.d.skipLocked+`)
		UPDATE deliveries SET lease_owner = ?, lease_until = ? FROM c WHERE deliveries.seq = c.claimed
		RETURNING `+deliveryCols, args...)
	out, err := collect(nil, rows, err, scanDelivery)
	if err != nil {
		return nil, s.wrap("claim deliveries", err)
	}
	slices.SortFunc(out, func(a, b store.Delivery) int {
		if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	return out, nil
}

// RenewDeliveryLeases extends the leases owner still holds and returns the
// ids it no longer holds.
func (s *Store) RenewDeliveryLeases(ctx context.Context, owner string, ids []string, until time.Time) ([]string, error) {
	kept := map[string]bool{}
	err := s.d.chunks(ids, func(part []string) error {
		in, args := s.d.In("id", part)
		rows, err := s.w.Query(ctx, s.byID(`lease_owner = ? AND `+Claimable+` AND `+in, `lease_until = ?`)+` RETURNING id`,
			slices.Concat([]any{owner}, args, []any{MS(until)})...)
		_, err = collect(nil, rows, err, func(r Row) (struct{}, error) {
			var id string
			err := r.Scan(&id)
			kept[id] = true
			return struct{}{}, err
		})
		return err
	})
	if err != nil {
		return nil, s.wrap("renew delivery leases", err)
	}
	var lost []string
	for _, id := range ids {
		if !kept[id] {
			lost = append(lost, id)
		}
	}
	return lost, nil
}

// ReleaseDeliveries gives back leased deliveries unattempted, due at next.
func (s *Store) ReleaseDeliveries(ctx context.Context, owner string, ids []string, next time.Time) error {
	err := s.d.chunks(ids, func(part []string) error {
		in, args := s.d.In("id", part)
		_, err := s.w.Exec(ctx, s.byID(`lease_owner = ? AND `+Claimable+` AND `+in, `lease_owner = '', lease_until = 0, next_attempt_at = ?`),
			slices.Concat([]any{owner}, args, []any{MS(next)})...)
		return err
	})
	return s.wrap("release deliveries", err)
}

// DeliveryStreams lists the streams with a claimable delivery at now, and
// every disabled stream; the deliveries of the streams in full are not
// looked at. Looking means walking a stream's due deliveries in the
// partial index until one is not leased, so a stream whose every due
// delivery is held by a queue (a receiver that never answers) costs a
// walk of all of them: the caller names those it could not take more
// of anyway. The CTE is materialized so that the walk runs once per
// stream rather than once for the filter and once for the column.
func (s *Store) DeliveryStreams(ctx context.Context, now time.Time, full []string) ([]store.DeliveryStream, error) {
	n := MS(now)
	due := `EXISTS (SELECT 1 FROM deliveries d WHERE d.stream_id = e.stream_id AND d.` + Claimable + ` AND d.next_attempt_at <= ? AND d.lease_until < ?)`
	var args []any
	if len(full) > 0 {
		if s.d.inChunk > 0 && len(full) > s.d.inChunk {
			full = full[:s.d.inChunk] // the rest are looked at: only slower
		}
		var in string
		in, args = s.d.In("e.stream_id", full)
		due = `CASE WHEN ` + in + ` THEN FALSE ELSE ` + due + ` END`
	}
	args = append(args, n, n)
	rows, err := s.r.Query(ctx, `WITH x AS MATERIALIZED (
		SELECT e.stream_id, e.org, e.env, e.disabled_at, e.url, e.reason, `+due+` AS due FROM delivery_endpoints e)
		SELECT stream_id, org, env, disabled_at, url, reason, due FROM x WHERE due OR disabled_at > 0 ORDER BY stream_id`, args...)
	out, err := collect(nil, rows, err, func(r Row) (store.DeliveryStream, error) {
		var d store.DeliveryStream
		var at int64
		err := r.Scan(&d.StreamID, &d.Org, &d.Env, &at, &d.URL, &d.Reason, &d.Due)
		d.Disabled, d.DisabledAt = at > 0, FromMS(at)
		return d, err
	})
	return out, s.wrap("delivery streams", err)
}

// ListDeliveries pages a stream's deliveries, newest first.
func (s *Store) ListDeliveries(ctx context.Context, sc store.Scope, streamID string, q store.DeliveryQuery) ([]store.Delivery, int64, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	where := `org = ? AND env = ? AND stream_id = ?`
	args := []any{sc.Org, sc.Env, streamID}
	switch {
	case q.Status == store.DeliveryDelivered:
		where += ` AND status = 'delivered'`
	case slices.Contains(store.DeliveryStatuses, q.Status):
		// a literal, so the planners see the query within deliveries_open
		where += ` AND status = '` + q.Status + `'`
	case q.Status != "":
		where += ` AND status = ?`
		args = append(args, q.Status)
	}
	if q.Before > 0 {
		where += ` AND seq < ?`
		args = append(args, q.Before)
	}
	args = append(args, limit+1)
	rows, err := s.r.Query(ctx, `SELECT `+deliveryCols+` FROM deliveries WHERE `+where+` ORDER BY seq DESC LIMIT ?`, args...)
	out, err := collect(nil, rows, err, scanDelivery)
	if err != nil {
		return nil, 0, s.wrap("list deliveries", err)
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].Seq
	}
	return out, next, nil
}

// enableEndpoint clears a stream's disabled mark.
const enableEndpoint = `UPDATE delivery_endpoints SET disabled_at = 0, url = '', reason = '' WHERE stream_id = ? AND org = ? AND env = ?`

// RequeueDeliveries makes the selected deliveries pending and due at
// r.Now with attempts reset, skipping rows leased at r.Now, and enables
// a disabled endpoint; it returns how many. By ids, it also tells apart
// the ids it did not requeue: the update returns the ids it requeued, and
// only when some were not is a second look at those made, at the log and
// the parked deliveries in one statement (one snapshot: a delivery moved
// from one to the other meanwhile is seen in one of them). A row of the
// log it finds leased was in flight; one it finds not leased came into
// the log after the update (unparked), or its send ended meanwhile, and
// is requeued then. A parked one is queued (a backend that parks
// elsewhere adds its own).
func (s *Store) RequeueDeliveries(ctx context.Context, sc store.Scope, streamID string, r store.DeliveryRequeue) (store.DeliveryRequeued, error) {
	now := MS(r.Now)
	const set = `status = 'pending', attempts = 0, next_attempt_at = ?, queued_at = ?, delivered_at = 0, lease_owner = '', lease_until = 0`
	const where = `org = ? AND env = ? AND stream_id = ? AND lease_until < ?`
	const scoped = `org = ? AND env = ? AND stream_id = ?`
	head, tail := []any{sc.Org, sc.Env, streamID, now}, []any{now, now}
	var out store.DeliveryRequeued
	err := s.inTx(ctx, "requeue deliveries", func(tx Querier) error {
		out = store.DeliveryRequeued{}
		if len(r.IDs) > 0 {
			ids := uniq(r.IDs)
			done := make(map[string]bool, len(ids))
			requeue := func(ids []string) error {
				return s.d.chunks(ids, func(part []string) error {
					in, args := s.d.In("id", part)
					rows, err := tx.Query(ctx, s.byID(where+` AND `+in, set)+` RETURNING id`, slices.Concat(head, args, tail)...)
					_, err = collect(nil, rows, err, func(r Row) (struct{}, error) {
						var id string
						err := r.Scan(&id)
						done[id] = true
						return struct{}{}, err
					})
					return err
				})
			}
			if err := requeue(ids); err != nil {
				return err
			}
			rest := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return done[id] })
			// at: 1 leased in the log, 0 not leased in the log, -1 parked
			at := make(map[string]int, len(rest))
			err := s.d.chunks(rest, func(part []string) error {
				in, args := s.d.In("id", part)
				scope := []any{sc.Org, sc.Env, streamID}
				rows, err := tx.Query(ctx, `SELECT id, CASE WHEN lease_until >= ? THEN 1 ELSE 0 END FROM deliveries WHERE `+scoped+` AND `+in+`
					UNION ALL SELECT id, -1 FROM parked_deliveries WHERE `+scoped+` AND `+in,
					slices.Concat([]any{now}, scope, args, scope, args)...)
				_, err = collect(nil, rows, err, func(r Row) (struct{}, error) {
					var id string
					var w int
					err := r.Scan(&id, &w)
					// the log's row counts over a parked copy of it, which
					// the move into the log drops
					if old, ok := at[id]; !ok || old < w {
						at[id] = w
					}
					return struct{}{}, err
				})
				return err
			})
			if err != nil {
				return err
			}
			var again []string
			for _, id := range rest {
				if w, ok := at[id]; ok && w == 0 {
					again = append(again, id)
				}
			}
			if err := requeue(again); err != nil {
				return err
			}
			out.Requeued = int64(len(done))
			out.NotFound, out.InFlight, out.Queued = []string{}, []string{}, []string{}
			for _, id := range rest {
				w, ok := at[id]
				switch {
				case done[id]:
				case !ok:
					out.NotFound = append(out.NotFound, id)
				case w < 0:
					out.Queued = append(out.Queued, id)
				default: // leased at the first look, or again by the second update
					out.InFlight = append(out.InFlight, id)
				}
			}
		} else {
			n, err := tx.Exec(ctx, s.byID(where+` AND created_at >= ? AND created_at < ?`, set), slices.Concat(head, []any{MS(r.From), MS(r.To)}, tail)...)
			if err != nil {
				return err
			}
			out.Requeued = n
		}
		if out.Requeued == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, enableEndpoint, streamID, sc.Org, sc.Env)
		return err
	})
	if err != nil {
		return store.DeliveryRequeued{}, err
	}
	return out, nil
}

// uniq returns vals without repeats, each at its first place, in a new
// slice.
func uniq(vals []string) []string {
	seen := make(map[string]bool, len(vals))
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// UnparkDeliveries moves nothing: both backends park deliveries their own
// way (SQLite in a spool, PostgreSQL in parked_deliveries) and override
// it, with ParkedStreams, ListParkedDeliveries and CountDeliveries.
func (s *Store) UnparkDeliveries(context.Context, string, int) (int64, error) { return 0, nil }

// ParkedStreams is empty: nothing is parked.
func (s *Store) ParkedStreams(context.Context) ([]string, error) { return nil, nil }

// ListParkedDeliveries lists none: nothing is parked.
func (s *Store) ListParkedDeliveries(context.Context, store.Scope, string, int64, int) ([]store.Delivery, int64, error) {
	return nil, 0, nil
}

// CountDeliveries counts a stream's deliveries per status, every status
// present.
func (s *Store) CountDeliveries(ctx context.Context, sc store.Scope, streamID string) (map[string]int64, error) {
	out := make(map[string]int64, len(store.DeliveryStatuses))
	for _, st := range store.DeliveryStatuses {
		out[st] = 0
	}
	// one statement, so both counts are of one snapshot; each reads one
	// index and no row, the scope checked once on one of the stream's
	// rows (they all have its scope)
	rows, err := s.r.Query(ctx, `SELECT '', COUNT(*) FROM deliveries WHERE stream_id = ? AND `+inScope+`
		UNION ALL SELECT status, COUNT(*) FROM deliveries WHERE stream_id = ? AND (`+OpenStatus+`) AND `+inScope+` GROUP BY status`,
		streamID, streamID, sc.Org, sc.Env, streamID, streamID, sc.Org, sc.Env)
	var all, open int64
	_, err = collect(nil, rows, err, func(r Row) (struct{}, error) {
		var st string
		var n int64
		err := r.Scan(&st, &n)
		if st == "" {
			all = n
		} else {
			out[st], open = n, open+n
		}
		return struct{}{}, err
	})
	if err != nil {
		return nil, s.wrap("count deliveries", err)
	}
	out[store.DeliveryDelivered] = all - open
	return out, nil
}

// DisableDeliveries marks a stream's endpoint disabled (recording url and
// reason) and moves its pending and failed deliveries to disabled,
// returning how many moved.
func (s *Store) DisableDeliveries(ctx context.Context, sc store.Scope, streamID, url, reason string, at time.Time) (int64, error) {
	var moved int64
	err := s.inTx(ctx, "disable deliveries", func(tx Querier) error {
		// the endpoint row first: an enqueue that commits after this sees
		// it disabled, one that committed before is moved by the update
		if _, err := tx.Exec(ctx, `INSERT INTO delivery_endpoints(stream_id, org, env, disabled_at, url, reason) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (stream_id) DO UPDATE SET disabled_at = excluded.disabled_at, url = excluded.url, reason = excluded.reason`,
			streamID, sc.Org, sc.Env, MS(at), url, reason); err != nil {
			return err
		}
		var err error
		moved, err = tx.Exec(ctx, s.byID(`stream_id = ? AND org = ? AND env = ? AND `+Claimable, `status = 'disabled', lease_owner = '', lease_until = 0`),
			streamID, sc.Org, sc.Env)
		return err
	})
	if err != nil {
		return 0, err
	}
	return moved, nil
}

// EnableDeliveries clears the disabled mark and makes the stream's
// disabled deliveries pending, due at now.
func (s *Store) EnableDeliveries(ctx context.Context, sc store.Scope, streamID string, now time.Time) (int64, error) {
	var moved int64
	err := s.inTx(ctx, "enable deliveries", func(tx Querier) error {
		if _, err := tx.Exec(ctx, enableEndpoint, streamID, sc.Org, sc.Env); err != nil {
			return err
		}
		var err error
		moved, err = tx.Exec(ctx, s.byID(`stream_id = ? AND org = ? AND env = ? AND status = 'disabled'`, `status = 'pending', attempts = 0, next_attempt_at = ?, queued_at = ?`),
			streamID, sc.Org, sc.Env, MS(now), MS(now))
		return err
	})
	if err != nil {
		return 0, err
	}
	return moved, nil
}

// PurgeDeliveries deletes up to limit deliveries in one of statuses
// created before before, returning how many.
func (s *Store) PurgeDeliveries(ctx context.Context, statuses []string, before time.Time, limit int) (int64, error) {
	if len(statuses) == 0 || limit <= 0 {
		return 0, nil
	}
	in, args := s.d.In("status", statuses)
	n, err := s.w.Exec(ctx, `DELETE FROM deliveries WHERE seq IN (SELECT seq FROM deliveries WHERE created_at < ? AND `+in+` LIMIT ?)`,
		slices.Concat([]any{MS(before)}, args, []any{limit})...)
	if err != nil {
		return 0, s.wrap("purge deliveries", err)
	}
	return n, nil
}
