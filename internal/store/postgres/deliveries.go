package postgres

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/store"
)

// Deliveries (store.Deliveries) on PostgreSQL. Claims are one UPDATE over
// a sub-select FOR UPDATE SKIP LOCKED, so concurrent claimers on several
// nodes skip each other's rows instead of waiting, and a row whose lease
// another claimer just took is re-checked (lease_until) and dropped.
// Batches are bound as arrays and expanded with unnest: one statement,
// one round trip, whatever the batch size.

var _ store.Deliveries = (*Store)(nil)

const deliveryCols = `seq, id, org, env, stream_id, msg_offset, payload, status, attempts, next_attempt_at, queued_at,
	last_status_code, last_error, last_latency_ms, created_at, delivered_at, lease_owner, lease_until`

const claimable = `status IN ('pending', 'failed')`

// qualified prefixes every column of a column list with table.
func qualified(table, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = table + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

func scanDelivery(row pgx.Row) (store.Delivery, error) {
	var d store.Delivery
	var next, queued, created, delivered, lease int64
	if err := row.Scan(&d.Seq, &d.ID, &d.Org, &d.Env, &d.StreamID, &d.Offset, &d.Payload, &d.Status, &d.Attempts, &next, &queued,
		&d.LastStatusCode, &d.LastError, &d.LastLatencyMS, &created, &delivered, &d.LeaseOwner, &lease); err != nil {
		return d, err
	}
	d.NextAttemptAt, d.QueuedAt, d.CreatedAt, d.DeliveredAt, d.LeaseUntil = fromMS(next), fromMS(queued), fromMS(created), fromMS(delivered), fromMS(lease)
	return d, nil
}

func scanDeliveries(rows pgx.Rows) ([]store.Delivery, error) {
	defer rows.Close()
	var out []store.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// EnqueueDeliveries inserts deliveries, skipping known ids: the endpoint
// rows and the deliveries go in one batch, which PostgreSQL runs as one
// implicit transaction.
func (s *Store) EnqueueDeliveries(ctx context.Context, ds []store.Delivery) ([]store.Delivery, error) {
	if len(ds) == 0 {
		return nil, nil
	}
	var eps [3][]string
	seen := map[string]bool{}
	n := len(ds)
	ids, orgs, envs, streams, owners := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	offsets, next, queued, created, until := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	payloads := make([][]byte, n)
	for i, d := range ds {
		if !seen[d.StreamID] {
			seen[d.StreamID] = true
			eps[0], eps[1], eps[2] = append(eps[0], d.StreamID), append(eps[1], d.Org), append(eps[2], d.Env)
		}
		ids[i], orgs[i], envs[i], streams[i], owners[i] = d.ID, d.Org, d.Env, d.StreamID, d.LeaseOwner
		offsets[i], next[i], queued[i], created[i], until[i] = d.Offset, ms(d.NextAttemptAt), ms(d.QueuedAt), ms(d.CreatedAt), ms(d.LeaseUntil)
		payloads[i] = d.Payload
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO delivery_endpoints(stream_id, org, env) SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT (stream_id) DO NOTHING`,
		eps[0], eps[1], eps[2])
	b.Queue(`INSERT INTO deliveries(id, org, env, stream_id, msg_offset, payload, status, next_attempt_at, queued_at, created_at, lease_owner, lease_until)
		SELECT u.id, u.org, u.env, u.stream_id, u.off, u.payload,
			CASE WHEN e.disabled_at > 0 THEN 'disabled' ELSE 'pending' END, u.next, u.queued, u.created,
			CASE WHEN e.disabled_at > 0 THEN '' ELSE u.owner END, CASE WHEN e.disabled_at > 0 THEN 0 ELSE u.until END
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bytea[], $7::bigint[], $8::bigint[], $9::bigint[], $10::text[], $11::bigint[])
			WITH ORDINALITY AS u(id, org, env, stream_id, off, payload, next, queued, created, owner, until, ord)
		LEFT JOIN delivery_endpoints e ON e.stream_id = u.stream_id
		ORDER BY u.ord
		ON CONFLICT (id) DO NOTHING
		RETURNING id, status, seq`,
		ids, orgs, envs, streams, offsets, payloads, next, queued, created, owners, until)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, wrap("enqueue deliveries", err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, wrap("enqueue deliveries", err)
	}
	type ins struct {
		status string
		seq    int64
	}
	got := map[string]ins{}
	for rows.Next() {
		var id string
		var in ins
		if err := rows.Scan(&id, &in.status, &in.seq); err != nil {
			rows.Close()
			return nil, wrap("enqueue deliveries", err)
		}
		got[id] = in
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap("enqueue deliveries", err)
	}
	if err := br.Close(); err != nil {
		return nil, wrap("enqueue deliveries", err)
	}
	out := make([]store.Delivery, 0, len(got))
	for _, d := range ds {
		in, ok := got[d.ID]
		if !ok {
			continue
		}
		delete(got, d.ID) // a duplicate id within ds is inserted once
		d.Status, d.Seq, d.Attempts = in.status, in.seq, 0
		if d.Status == store.DeliveryDisabled {
			d.LeaseOwner, d.LeaseUntil = "", time.Time{}
		}
		out = append(out, d)
	}
	return out, nil
}

// ClaimDeliveries leases due deliveries of some streams.
func (s *Store) ClaimDeliveries(ctx context.Context, c store.DeliveryClaim) ([]store.Delivery, error) {
	if len(c.StreamIDs) == 0 || c.Limit <= 0 {
		return nil, nil
	}
	// The CTE is materialized: as a plain IN (sub-select) the planner may
	// run the sub-select more than once and lease more than Limit rows.
	rows, err := s.pool.Query(ctx, `WITH c AS MATERIALIZED (
			SELECT seq FROM deliveries WHERE stream_id = ANY($3::text[]) AND `+claimable+`
			AND next_attempt_at <= $4 AND lease_until < $4 ORDER BY next_attempt_at, seq LIMIT $5 FOR UPDATE SKIP LOCKED)
		UPDATE deliveries d SET lease_owner = $1, lease_until = $2 FROM c WHERE d.seq = c.seq
		RETURNING `+qualified("d", deliveryCols), c.Owner, ms(c.Until), c.StreamIDs, ms(c.Now), c.Limit)
	if err != nil {
		return nil, wrap("claim deliveries", err)
	}
	out, err := scanDeliveries(rows)
	if err != nil {
		return nil, wrap("claim deliveries", err)
	}
	slices.SortFunc(out, func(a, b store.Delivery) int {
		if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	return out, nil
}

// RenewDeliveryLeases extends the leases owner holds.
func (s *Store) RenewDeliveryLeases(ctx context.Context, owner string, ids []string, until time.Time) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `UPDATE deliveries SET lease_until = $1 WHERE lease_owner = $2 AND `+claimable+` AND id = ANY($3::text[]) RETURNING id`,
		ms(until), owner, ids)
	if err != nil {
		return nil, wrap("renew delivery leases", err)
	}
	defer rows.Close()
	kept := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, wrap("renew delivery leases", err)
		}
		kept[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("renew delivery leases", err)
	}
	var lost []string
	for _, id := range ids {
		if !kept[id] {
			lost = append(lost, id)
		}
	}
	return lost, nil
}

// ReleaseDeliveries gives back leased deliveries unattempted.
func (s *Store) ReleaseDeliveries(ctx context.Context, owner string, ids []string, next time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, `UPDATE deliveries SET lease_owner = '', lease_until = 0, next_attempt_at = $1
		WHERE lease_owner = $2 AND `+claimable+` AND id = ANY($3::text[])`, ms(next), owner, ids)
	return wrap("release deliveries", err)
}

// RecordDeliveries writes outcomes in one statement.
func (s *Store) RecordDeliveries(ctx context.Context, owner string, rs []store.DeliveryResult) error {
	if len(rs) == 0 {
		return nil
	}
	n := len(rs)
	ids, statuses, errs := make([]string, n), make([]string, n), make([]string, n)
	incs, codes := make([]int32, n), make([]int32, n)
	next, lat, at := make([]int64, n), make([]int64, n), make([]int64, n)
	for i, r := range rs {
		ids[i], statuses[i], errs[i], codes[i] = r.ID, r.Status, r.Error, int32(r.StatusCode)
		if r.Attempted {
			incs[i] = 1
		}
		next[i], lat[i] = ms(r.NextAttemptAt), r.LatencyMS
		if r.Status == store.DeliveryDelivered {
			at[i] = ms(r.At)
		}
	}
	// The rows are locked in id order first, as every other statement on
	// deliveries locks them (an index scan over id = ANY): a join over the
	// unnested arrays would lock them in whatever order it meets them, and
	// two nodes touching the same deliveries (a lease taken over) could
	// deadlock.
	_, err := s.pool.Exec(ctx, `WITH u AS (
			SELECT * FROM unnest($2::text[], $3::text[], $4::int[], $5::bigint[], $6::int[], $7::text[], $8::bigint[], $9::bigint[])
				AS u(id, status, inc, next, code, err, lat, at)
		), l AS (
			SELECT id FROM deliveries WHERE id = ANY($2::text[]) ORDER BY id FOR UPDATE
		)
		UPDATE deliveries d SET status = u.status, attempts = d.attempts + u.inc, next_attempt_at = u.next,
			last_status_code = u.code, last_error = u.err, last_latency_ms = u.lat, delivered_at = u.at, lease_owner = '', lease_until = 0
		FROM u, l
		WHERE d.id = u.id AND l.id = d.id AND d.lease_owner = $1 AND d.`+claimable,
		owner, ids, statuses, incs, next, codes, errs, lat, at)
	return wrap("record deliveries", err)
}

// DeliveryStreams lists streams with claimable deliveries and disabled
// streams.
func (s *Store) DeliveryStreams(ctx context.Context, now time.Time) ([]store.DeliveryStream, error) {
	rows, err := s.pool.Query(ctx, `SELECT stream_id, org, env, disabled_at, url, reason, due FROM (
		SELECT e.stream_id, e.org, e.env, e.disabled_at, e.url, e.reason,
			EXISTS (SELECT 1 FROM deliveries d WHERE d.stream_id = e.stream_id AND d.`+claimable+` AND d.next_attempt_at <= $1 AND d.lease_until < $1) AS due
		FROM delivery_endpoints e) x WHERE due OR disabled_at > 0 ORDER BY stream_id`, ms(now))
	if err != nil {
		return nil, wrap("delivery streams", err)
	}
	defer rows.Close()
	var out []store.DeliveryStream
	for rows.Next() {
		var d store.DeliveryStream
		var at int64
		if err := rows.Scan(&d.StreamID, &d.Org, &d.Env, &at, &d.URL, &d.Reason, &d.Due); err != nil {
			return nil, wrap("delivery streams", err)
		}
		d.Disabled, d.DisabledAt = at > 0, fromMS(at)
		out = append(out, d)
	}
	return out, wrap("delivery streams", rows.Err())
}

// ListDeliveries pages a stream's deliveries, newest first.
func (s *Store) ListDeliveries(ctx context.Context, sc store.Scope, streamID string, q store.DeliveryQuery) ([]store.Delivery, int64, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	where := `org = $1 AND env = $2 AND stream_id = $3`
	args := []any{sc.Org, sc.Env, streamID}
	if q.Status != "" {
		args = append(args, q.Status)
		where += ` AND status = $` + strconv.Itoa(len(args))
	}
	if q.Before > 0 {
		args = append(args, q.Before)
		where += ` AND seq < $` + strconv.Itoa(len(args))
	}
	args = append(args, limit+1)
	rows, err := s.pool.Query(ctx, `SELECT `+deliveryCols+` FROM deliveries WHERE `+where+` ORDER BY seq DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, 0, wrap("list deliveries", err)
	}
	out, err := scanDeliveries(rows)
	if err != nil {
		return nil, 0, wrap("list deliveries", err)
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].Seq
	}
	return out, next, nil
}

// RequeueDeliveries makes selected deliveries pending again.
func (s *Store) RequeueDeliveries(ctx context.Context, sc store.Scope, streamID string, r store.DeliveryRequeue) (int64, error) {
	now := ms(r.Now)
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, wrap("requeue deliveries", err)
	}
	defer tx.Rollback(ctx)
	set := `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = $1, queued_at = $1, delivered_at = 0, lease_owner = '', lease_until = 0
		WHERE org = $2 AND env = $3 AND stream_id = $4 AND lease_until < $1`
	var total int64
	if len(r.IDs) > 0 {
		tag, err := tx.Exec(ctx, set+` AND id = ANY($5::text[])`, now, sc.Org, sc.Env, streamID, r.IDs)
		if err != nil {
			return 0, wrap("requeue deliveries", err)
		}
		total = tag.RowsAffected()
	} else {
		tag, err := tx.Exec(ctx, set+` AND created_at >= $5 AND created_at < $6`, now, sc.Org, sc.Env, streamID, ms(r.From), ms(r.To))
		if err != nil {
			return 0, wrap("requeue deliveries", err)
		}
		total = tag.RowsAffected()
	}
	if total > 0 {
		if _, err := tx.Exec(ctx, `UPDATE delivery_endpoints SET disabled_at = 0, url = '', reason = '' WHERE stream_id = $1 AND org = $2 AND env = $3`,
			streamID, sc.Org, sc.Env); err != nil {
			return 0, wrap("requeue deliveries", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, wrap("requeue deliveries", err)
	}
	return total, nil
}

// UnparkDeliveries has nothing to move: EnqueueDeliveries enqueues
// deliveries marked Park like any other (on PostgreSQL an insert costs
// the same in either table, and the queue's rows are what other nodes
// see).
func (s *Store) UnparkDeliveries(context.Context, string, int) (int64, error) { return 0, nil }

// ParkedStreams is empty: nothing is parked on PostgreSQL.
func (s *Store) ParkedStreams(context.Context) ([]string, error) { return nil, nil }

// CountDeliveries counts a stream's deliveries per status.
func (s *Store) CountDeliveries(ctx context.Context, sc store.Scope, streamID string) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT status, COUNT(*) FROM deliveries WHERE stream_id = $1 AND org = $2 AND env = $3 GROUP BY status`, streamID, sc.Org, sc.Env)
	if err != nil {
		return nil, wrap("count deliveries", err)
	}
	defer rows.Close()
	out := make(map[string]int64, len(store.DeliveryStatuses))
	for _, st := range store.DeliveryStatuses {
		out[st] = 0
	}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, wrap("count deliveries", err)
		}
		out[st] = n
	}
	return out, wrap("count deliveries", rows.Err())
}

// DisableDeliveries marks a stream's endpoint disabled.
func (s *Store) DisableDeliveries(ctx context.Context, sc store.Scope, streamID, url, reason string, at time.Time) (int64, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, wrap("disable deliveries", err)
	}
	defer tx.Rollback(ctx)
	// the endpoint row first: an enqueue that commits after this sees it
	// disabled, one that committed before is moved by the update below
	if _, err := tx.Exec(ctx, `INSERT INTO delivery_endpoints(stream_id, org, env, disabled_at, url, reason) VALUES ($1,$2,$3,$4,$5,$6)
		ON CONFLICT (stream_id) DO UPDATE SET disabled_at = excluded.disabled_at, url = excluded.url, reason = excluded.reason`,
		streamID, sc.Org, sc.Env, ms(at), url, reason); err != nil {
		return 0, wrap("disable deliveries", err)
	}
	tag, err := tx.Exec(ctx, `UPDATE deliveries SET status = 'disabled', lease_owner = '', lease_until = 0
		WHERE stream_id = $1 AND org = $2 AND env = $3 AND `+claimable, streamID, sc.Org, sc.Env)
	if err != nil {
		return 0, wrap("disable deliveries", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, wrap("disable deliveries", err)
	}
	return tag.RowsAffected(), nil
}

// EnableDeliveries clears the disabled mark of a stream's endpoint.
func (s *Store) EnableDeliveries(ctx context.Context, sc store.Scope, streamID string, now time.Time) (int64, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, wrap("enable deliveries", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `UPDATE delivery_endpoints SET disabled_at = 0, url = '', reason = '' WHERE stream_id = $1 AND org = $2 AND env = $3`,
		streamID, sc.Org, sc.Env); err != nil {
		return 0, wrap("enable deliveries", err)
	}
	tag, err := tx.Exec(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = $1, queued_at = $1
		WHERE stream_id = $2 AND org = $3 AND env = $4 AND status = 'disabled'`, ms(now), streamID, sc.Org, sc.Env)
	if err != nil {
		return 0, wrap("enable deliveries", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, wrap("enable deliveries", err)
	}
	return tag.RowsAffected(), nil
}

// PurgeDeliveries deletes old deliveries in the given statuses.
func (s *Store) PurgeDeliveries(ctx context.Context, statuses []string, before time.Time, limit int) (int64, error) {
	if len(statuses) == 0 || limit <= 0 {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM deliveries WHERE seq IN (SELECT seq FROM deliveries WHERE created_at < $1 AND status = ANY($2::text[]) LIMIT $3)`,
		ms(before), statuses, limit)
	if err != nil {
		return 0, wrap("purge deliveries", err)
	}
	return tag.RowsAffected(), nil
}
