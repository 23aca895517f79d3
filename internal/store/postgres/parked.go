package postgres

import (
	"context"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlstore"
)

// Parked webhook deliveries (store.Delivery Park) go to parked_deliveries,
// a narrow table beside the queue: one multi-row insert per batch into a
// heap and two B-trees (its serial key, and stream and order), where a
// queued delivery writes six and stays in the indexes the healthy
// streams' claims and outcomes use. Every node sees them: any node that
// can send to the stream moves them into the queue (UnparkDeliveries).

// park inserts deliveries into parked_deliveries, with the endpoint rows
// of streams met for the first time, in one batch (one implicit
// transaction, one round trip).
func (s *Store) park(ctx context.Context, ds []store.Delivery) error {
	var eps [3][]string
	seen := map[string]bool{}
	n := len(ds)
	ids, orgs, envs, streams := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	offsets, next, queued, created := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	payloads := make([][]byte, n)
	for i, d := range ds {
		if !seen[d.StreamID] {
			seen[d.StreamID] = true
			eps[0], eps[1], eps[2] = append(eps[0], d.StreamID), append(eps[1], d.Org), append(eps[2], d.Env)
		}
		ids[i], orgs[i], envs[i], streams[i] = d.ID, d.Org, d.Env, d.StreamID
		offsets[i], next[i], queued[i], created[i] = d.Offset, sqlstore.MS(d.NextAttemptAt), sqlstore.MS(d.QueuedAt), sqlstore.MS(d.CreatedAt)
		payloads[i] = d.Payload
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO delivery_endpoints(stream_id, org, env) SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT (stream_id) DO NOTHING`,
		eps[0], eps[1], eps[2])
	b.Queue(`INSERT INTO parked_deliveries(id, org, env, stream_id, msg_offset, payload, next_attempt_at, queued_at, created_at)
		SELECT u.id, u.org, u.env, u.stream_id, u.off, u.payload, u.next, u.queued, u.created
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bytea[], $7::bigint[], $8::bigint[], $9::bigint[])
			WITH ORDINALITY AS u(id, org, env, stream_id, off, payload, next, queued, created, ord)
		ORDER BY u.ord`,
		ids, orgs, envs, streams, offsets, payloads, next, queued, created)
	br := s.pool.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return wrap("park deliveries", err)
	}
	if _, err := br.Exec(); err != nil {
		br.Close()
		return wrap("park deliveries", err)
	}
	return wrap("park deliveries", br.Close())
}

// ParkedStreams lists the streams with parked deliveries: a walk of the
// index that visits each stream once, however many deliveries it has
// parked.
func (s *Store) ParkedStreams(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `WITH RECURSIVE t(stream_id) AS (
			(SELECT stream_id FROM parked_deliveries ORDER BY stream_id LIMIT 1)
			UNION ALL
			SELECT (SELECT p.stream_id FROM parked_deliveries p WHERE p.stream_id > t.stream_id ORDER BY p.stream_id LIMIT 1)
			FROM t WHERE t.stream_id IS NOT NULL)
		SELECT stream_id FROM t WHERE stream_id IS NOT NULL`)
	if err != nil {
		return nil, wrap("parked streams", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, wrap("parked streams", err)
}

// UnparkDeliveries moves up to limit of a stream's oldest parked
// deliveries into the queue in one statement: deleted from
// parked_deliveries and inserted as EnqueueDeliveries would (known ids
// skipped, a disabled stream's stored disabled). Rows another node is
// moving are skipped, so two nodes never move the same one.
func (s *Store) UnparkDeliveries(ctx context.Context, streamID string, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int64
	err := s.pool.QueryRow(ctx, `WITH picked AS (
			SELECT seq FROM parked_deliveries WHERE stream_id = $1 ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED
		), moved AS (
			DELETE FROM parked_deliveries p USING picked WHERE p.seq = picked.seq
			RETURNING p.seq, p.id, p.org, p.env, p.stream_id, p.msg_offset, p.payload, p.next_attempt_at, p.queued_at, p.created_at
		), ins AS (
			INSERT INTO deliveries(id, org, env, stream_id, msg_offset, payload, status, next_attempt_at, queued_at, created_at)
			SELECT m.id, m.org, m.env, m.stream_id, m.msg_offset, m.payload,
				CASE WHEN e.disabled_at > 0 THEN 'disabled' ELSE 'pending' END, m.next_attempt_at, m.queued_at, m.created_at
			FROM moved m LEFT JOIN delivery_endpoints e ON e.stream_id = m.stream_id
			ORDER BY m.seq
			ON CONFLICT (id) DO NOTHING
		)
		SELECT count(*) FROM moved`, streamID, limit).Scan(&n)
	if err != nil {
		return 0, wrap("unpark deliveries", err)
	}
	return n, nil
}

// ListParkedDeliveries pages a stream's parked deliveries of the scope,
// newest first; a position is a row's seq in parked_deliveries (its
// index on stream and seq serves the page).
func (s *Store) ListParkedDeliveries(ctx context.Context, sc store.Scope, streamID string, before int64, limit int) ([]store.Delivery, int64, error) {
	if limit <= 0 {
		return nil, 0, nil
	}
	if before <= 0 {
		before = math.MaxInt64 // the first page: a bound the index can seek to
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, id, org, env, stream_id, msg_offset, payload, next_attempt_at, queued_at, created_at
		FROM parked_deliveries WHERE stream_id = $1 AND seq < $4 AND org = $2 AND env = $3
		ORDER BY seq DESC LIMIT $5`, streamID, sc.Org, sc.Env, before, limit+1)
	if err != nil {
		return nil, 0, wrap("list parked deliveries", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Delivery, error) {
		var d store.Delivery
		var next, queued, created int64
		err := r.Scan(&d.Seq, &d.ID, &d.Org, &d.Env, &d.StreamID, &d.Offset, &d.Payload, &next, &queued, &created)
		d.NextAttemptAt, d.QueuedAt, d.CreatedAt = sqlstore.FromMS(next), sqlstore.FromMS(queued), sqlstore.FromMS(created)
		d.Status, d.Park = store.DeliveryPending, true
		return d, err
	})
	if err != nil {
		return nil, 0, wrap("list parked deliveries", err)
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].Seq
	}
	for i := range out {
		out[i].Seq = 0 // a parked row's seq is no place in the delivery log
	}
	return out, next, nil
}

// parkedRow names the parked count's row in CountDeliveries.
const parkedRow = "parked"

// inScope holds when the stream's deliveries are of the scope asked.
const inScope = `EXISTS (SELECT 1 FROM deliveries o WHERE o.stream_id = $1 AND o.org = $2 AND o.env = $3)`

// CountDeliveries counts a stream's deliveries per status, parked ones as
// pending, in one statement: one snapshot, so that a move from
// parked_deliveries to deliveries is counted once, never twice or not at
// all.
func (s *Store) CountDeliveries(ctx context.Context, sc store.Scope, streamID string) (map[string]int64, error) {
	out := make(map[string]int64, len(store.DeliveryStatuses))
	for _, st := range store.DeliveryStatuses {
		out[st] = 0
	}
	// each count of deliveries reads one index: all of the stream's, and
	// the ones not delivered by status (deliveries_open); the scope is
	// checked once on one of the stream's rows (they all have its scope)
	rows, err := s.pool.Query(ctx, `SELECT '', count(*) FROM deliveries WHERE stream_id = $1 AND `+inScope+`
		UNION ALL SELECT status, count(*) FROM deliveries WHERE stream_id = $1 AND (`+sqlstore.OpenStatus+`) AND `+inScope+` GROUP BY status
		UNION ALL SELECT $4, count(*) FROM parked_deliveries WHERE stream_id = $1 AND org = $2 AND env = $3`,
		streamID, sc.Org, sc.Env, parkedRow)
	if err != nil {
		return nil, wrap("count deliveries", err)
	}
	defer rows.Close()
	var all, open int64
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, wrap("count deliveries", err)
		}
		switch st {
		case "":
			all = n
		case parkedRow:
			out[store.DeliveryPending] += n
		default:
			out[st] += n
			open += n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("count deliveries", err)
	}
	out[store.DeliveryDelivered] = all - open
	return out, nil
}
