package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlstore"
)

// The statements of a point upload, in this dialect's placeholders for a
// pgx.Batch.
var (
	tripUpdate   = sqlstore.Postgres.Rebind(sqlstore.TripUpdate)
	insertBlock  = sqlstore.Postgres.Rebind(sqlstore.InsertBlock)
	deleteEvents = sqlstore.Postgres.Rebind(sqlstore.DeleteEvents)
	upsertEvent  = sqlstore.Postgres.Rebind(sqlstore.UpsertEvent)
)

// copyMinBlocks is the number of blocks from which AppendPoints writes
// them with COPY rather than in its batch. COPY costs a round trip of its
// own but encodes and parses less per row. Measured with
// BenchmarkAppendPoints (2 KiB blocks) on a 2-core machine whose COMMIT
// dominates and varies: at 16 blocks both take 0.8-3.5 ms; at 64 both take
// 4-5.5 ms, the batch allocating 873 KB per append and COPY 291 KB; at 256
// COPY takes 6.4-9.6 ms and 0.3 MB, the batch 9.8-12.7 ms and 4 MB.
const copyMinBlocks = 64

// AppendPoints updates the trip, inserts blocks, replaces the trip's events
// when replace is set and upserts events by id, in one transaction.
//
// Everything after BEGIN goes in one pgx.Batch, so a usual append costs
// three round trips (BEGIN, the batch, COMMIT) whatever its number of
// blocks and events; from copyMinBlocks blocks on, the blocks follow the
// batch as a COPY. The update is the batch's first statement: when it
// matches no row the statements after it have run for nothing and are
// rolled back. Events are one statement each, not one multi-row upsert,
// because the same id twice in one upsert is an error while here the later
// one wins.
func (s *Store) AppendPoints(ctx context.Context, t store.Trip, prev int64, blocks []store.PointBlock, events []store.TripEvent, replace bool) error {
	args, err := sqlstore.UpdateTripArgs(t, prev)
	if err != nil {
		return fmt.Errorf("postgres: append points: %w", err)
	}
	b := &pgx.Batch{}
	b.Queue(tripUpdate, args...)
	batched := blocks
	if len(blocks) >= copyMinBlocks {
		batched = nil
	}
	for _, pb := range batched {
		b.Queue(insertBlock, t.ID, pb.Seq, pb.FirstTS, pb.LastTS, pb.Count, pb.Data)
	}
	if replace {
		b.Queue(deleteEvents, t.ID)
	}
	for _, e := range events {
		b.Queue(upsertEvent, e.ID, t.ID, e.Type, sqlstore.MS(e.Time), string(e.Data))
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := sendAppend(ctx, tx, b, t, prev, batched, events, replace); err != nil {
			return err
		}
		if len(batched) == len(blocks) {
			return nil
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"trip_points"}, []string{"trip_id", "seq", "first_ts", "last_ts", "count", "data"},
			pgx.CopyFromSlice(len(blocks), func(i int) ([]any, error) {
				pb := blocks[i]
				return []any{t.ID, pb.Seq, pb.FirstTS, pb.LastTS, pb.Count, pb.Data}, nil
			}))
		if err != nil {
			return fmt.Errorf("copy %d blocks: %w", len(blocks), err)
		}
		return nil
	})
	if err != nil {
		return wrap("append points", err)
	}
	return nil
}

// sendAppend runs the batch of AppendPoints and reads its results in the
// order they were queued: the trip's update, the blocks, the deletion of
// events when replace is set, the events.
func sendAppend(ctx context.Context, tx pgx.Tx, b *pgx.Batch, t store.Trip, prev int64, blocks []store.PointBlock, events []store.TripEvent, replace bool) error {
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	tag, err := br.Exec()
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("trip %s: version %d: %w", t.ID, prev, store.ErrConflict)
	}
	for i := range blocks {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("block %d: %w", blocks[i].Seq, err)
		}
	}
	if replace {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("delete events: %w", err)
		}
	}
	for i := range events {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("event %s: %w", events[i].ID, err)
		}
	}
	return br.Close()
}
