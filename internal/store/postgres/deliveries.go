package postgres

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlstore"
)

// The two hot writes of the webhook queue (store.Deliveries; the rest of
// it is sqlstore's): a batch is bound as arrays and expanded with unnest,
// one statement and one round trip whatever the batch size.

var _ store.Deliveries = (*Store)(nil)

// EnqueueDeliveries inserts deliveries, skipping known ids: the endpoint
// rows and the deliveries go in one batch, which PostgreSQL runs as one
// implicit transaction. Deliveries marked Park go to parked_deliveries
// (parked.go), in a batch of their own.
func (s *Store) EnqueueDeliveries(ctx context.Context, ds []store.Delivery) ([]store.Delivery, error) {
	if slices.ContainsFunc(ds, func(d store.Delivery) bool { return d.Park }) {
		var park, kept []store.Delivery
		for _, d := range ds {
			if d.Park {
				park = append(park, d)
			} else {
				kept = append(kept, d)
			}
		}
		if err := s.park(ctx, park); err != nil {
			return nil, err
		}
		ds = kept
	}
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
		offsets[i], next[i], queued[i], created[i], until[i] = d.Offset, sqlstore.MS(d.NextAttemptAt), sqlstore.MS(d.QueuedAt), sqlstore.MS(d.CreatedAt), sqlstore.MS(d.LeaseUntil)
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

// RecordDeliveries writes outcomes in one statement. A result without an
// attempt keeps the status code and latency of the last attempt.
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
		next[i], lat[i] = sqlstore.MS(r.NextAttemptAt), r.LatencyMS
		if r.Status == store.DeliveryDelivered {
			at[i] = sqlstore.MS(r.At)
		}
	}
	// The rows are locked in id order first, as every other statement
	// changing more than one delivery locks them (sqlstore's byID): a join
	// over the unnested arrays would lock them in whatever order it meets
	// them, and two statements touching the same deliveries (a lease
	// renewed while its outcome is recorded, a lease taken over) could
	// deadlock. Rows no longer claimable are not locked: nothing here
	// changes them.
	_, err := s.pool.Exec(ctx, `WITH u AS (
			SELECT * FROM unnest($2::text[], $3::text[], $4::int[], $5::bigint[], $6::int[], $7::text[], $8::bigint[], $9::bigint[])
				AS u(id, status, inc, next, code, err, lat, at)
		), l AS (
			SELECT id FROM deliveries WHERE id = ANY($2::text[]) AND `+sqlstore.Claimable+` ORDER BY id FOR UPDATE
		)
		UPDATE deliveries d SET status = u.status, attempts = d.attempts + u.inc, next_attempt_at = u.next,
			last_status_code = CASE WHEN u.inc > 0 THEN u.code ELSE d.last_status_code END, last_error = u.err,
			last_latency_ms = CASE WHEN u.inc > 0 THEN u.lat ELSE d.last_latency_ms END, delivered_at = u.at, lease_owner = '', lease_until = 0
		FROM u, l
		WHERE d.id = u.id AND l.id = d.id AND d.lease_owner = $1 AND d.`+sqlstore.Claimable,
		owner, ids, statuses, incs, next, codes, errs, lat, at)
	return wrap("record deliveries", err)
}
