package sqlite

import (
	"context"
	"errors"
	"fmt"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlstore"
)

// maxAppendBatch bounds the uploads one transaction carries.
const maxAppendBatch = 128

// errClosed answers an append the store was closed before it wrote.
var errClosed = errors.New("sqlite: store closed")

// appendReq is one AppendPoints waiting for the appends writer.
type appendReq struct {
	t       store.Trip
	prev    int64
	args    []any
	blocks  []store.PointBlock
	events  []store.TripEvent
	replace bool
	err     error
	done    chan error // buffered: the writer never waits for the caller
}

// AppendPoints writes a trip's upload (its update, blocks and events)
// as sqlstore's does, but uploads that wait for the writer at the same
// time share one transaction: one BEGIN and one COMMIT (one WAL append)
// for all of them, each upload in a savepoint of its own so that its
// conflict (store.ErrConflict) or a constraint it breaks undoes its own
// writes only. It returns once the transaction holding the upload has
// committed, or with the upload's error. With one upload waiting it is
// one transaction, as before. A failure that is not the upload's own
// (the disk, the transaction) fails every upload of the transaction.
func (s *Store) AppendPoints(ctx context.Context, t store.Trip, prev int64, blocks []store.PointBlock, events []store.TripEvent, replace bool) error {
	args, err := sqlstore.UpdateTripArgs(t, prev)
	if err != nil {
		return fmt.Errorf("sqlite: append points: %w", err)
	}
	r := &appendReq{t: t, prev: prev, args: args, blocks: blocks, events: events, replace: replace, done: make(chan error, 1)}
	select {
	case s.appends <- r:
	case <-ctx.Done():
		return fmt.Errorf("sqlite: append points: %w", ctx.Err())
	case <-s.appendsStopped:
		return fmt.Errorf("sqlite: append points: %w", errClosed)
	}
	// once handed over the upload is written or not as its transaction
	// goes, whatever the caller's context does meanwhile: an answer that
	// it failed must mean it was not written
	select {
	case err := <-r.done:
		return err
	case <-s.appendsStopped:
		select {
		case err := <-r.done: // written before the writer stopped
			return err
		default:
			return fmt.Errorf("sqlite: append points: %w", errClosed)
		}
	}
}

// appendLoop is the appends writer: it takes what waits, up to
// maxAppendBatch, and writes it in one transaction, until stop closes.
func (s *Store) appendLoop(stop <-chan struct{}) {
	defer close(s.appendsStopped)
	batch := make([]*appendReq, 0, maxAppendBatch)
	for {
		select {
		case <-stop:
			return
		case r := <-s.appends:
			batch = append(batch[:0], r)
		}
	more:
		for len(batch) < maxAppendBatch {
			select {
			case r := <-s.appends:
				batch = append(batch, r)
			default:
				break more
			}
		}
		s.writeAppends(batch)
		clear(batch)
	}
}

// writeAppends writes batch in one transaction and answers each upload.
func (s *Store) writeAppends(batch []*appendReq) {
	ctx := context.Background() // the transaction is every upload's: no one caller cancels it
	answer := func(err error) {
		for _, r := range batch {
			if r.err == nil {
				r.err = err
			}
			if r.err != nil {
				r.err = fmt.Errorf("sqlite: append points: %w", classify(r.err))
			}
			r.done <- r.err
		}
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		answer(err)
		return
	}
	// abort answers every upload with err and the rollback's own error
	abort := func(err error) { answer(errors.Join(err, tx.Rollback())) }
	q := querier{txPrepared{tx, s.stmts}}
	multi := len(batch) > 1
	written := 0
	for _, r := range batch {
		if multi {
			if _, err := tx.ExecContext(ctx, "SAVEPOINT upload"); err != nil {
				abort(err)
				return
			}
		}
		r.err = sqlstore.WriteAppend(ctx, q, r.t, r.prev, r.args, r.blocks, r.events, r.replace)
		if r.err != nil && !ownFailure(r.err) {
			// the disk or the transaction: what it holds is not known
			err := r.err
			r.err = nil
			abort(err)
			return
		}
		if multi {
			if r.err != nil {
				if _, err := tx.ExecContext(ctx, "ROLLBACK TO upload"); err != nil {
					abort(err)
					return
				}
			}
			if _, err := tx.ExecContext(ctx, "RELEASE upload"); err != nil {
				abort(err)
				return
			}
		}
		if r.err == nil {
			written++
		}
	}
	if written == 0 {
		answer(tx.Rollback())
		return
	}
	answer(tx.Commit())
}

// ownFailure says err is an upload's own: its trip's version moved on,
// or a row it writes breaks a constraint. SQLite undoes the failed
// statement alone then and the transaction goes on.
func ownFailure(err error) bool {
	if errors.Is(err, store.ErrConflict) {
		return true
	}
	var se *msqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}
