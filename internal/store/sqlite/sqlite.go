// Package sqlite is the embedded store: modernc.org/sqlite (pure Go) in WAL
// mode with a busy timeout. All writes go through one connection (SQLite
// has one writer anyway; a single connection avoids SQLITE_BUSY churn),
// reads through a small pool.
//
// Checkpoints run beside the writer: a third connection copies the WAL
// into the database every CheckpointEvery (a passive checkpoint, which
// never blocks the writer or readers). The writer's own automatic
// checkpoint stays as the bound on the WAL's size, at walAutoCheckpoint
// pages, and finds almost nothing left to copy when it comes. With the
// default automatic checkpoint every 1,000 pages, the commit that crossed
// the mark did the copying and the fsync itself: a webhook delivery's
// p99 was 18 ms against 7–8 ms with checkpoints beside the writer
// (BenchmarkDispatch/Paced/Alone in delivery/webhook).
//
// The schema and the queries are those of store/sqlstore, shared with
// store/postgres, in its SQLite dialect: Store embeds a sqlstore.Store
// over the two pools (conn.go) and keeps here what SQLite does its own
// way: the webhook queue's enqueue and outcomes through statements
// prepared once on the writer (deliveries.go), and parked deliveries kept
// in a spool beside the database (parked.go).
//
// A Store is safe for concurrent use within one process; one process at
// a time opens a data directory. Claims need no row locks: the one writer
// runs them one after the other.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlstore"
)

// Config of the embedded store.
type Config struct {
	Dir         string        // data directory; created if missing
	BusyTimeout time.Duration // default 5s
	Readers     int           // read pool size, default 4
	// CheckpointEvery is the period of the background checkpoint,
	// default 250ms.
	CheckpointEvery time.Duration
	// Now is the clock of the applied_at recorded for each migration,
	// default time.Now.
	Now func() time.Time
}

// walAutoCheckpoint is the writer's own checkpoint mark in pages (about
// 40 MB of WAL): a bound, reached only when the background checkpoints
// fall behind.
const walAutoCheckpoint = 10_000

// Store is the SQLite backend.
type Store struct {
	*shared
	w      *sql.DB  // one connection: every write
	r      *sql.DB  // read pool
	c      *sql.DB  // one connection: background checkpoints
	parked *parking // parked webhook deliveries (parked.go)
	path   string

	stmts map[string]*sql.Stmt // writerStmts, prepared at Open; read-only after

	// appends carries AppendPoints' uploads to appendLoop, which
	// closes appendsStopped when stopAppends makes it return (appends.go)
	appends        chan *appendReq
	stopAppends    chan struct{}
	appendsStopped chan struct{}
	stopOnce       sync.Once

	stopCheckpoints context.CancelFunc
	checkpoints     chan struct{} // closed when the checkpoint loop returned
	// checkpointed is closed, and replaced, at the end of each round of
	// the checkpoint loop.
	checkpointed atomic.Pointer[chan struct{}]
}

var _ store.Backend = (*Store)(nil)

// shared is the SQL both backends share; embedded under this name, it
// adds no exported field to Store.
type shared = sqlstore.Store

// Open opens (creating if needed) the database in cfg.Dir and applies
// pending migrations.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Dir == "" {
		cfg.Dir = "data"
	}
	if cfg.BusyTimeout == 0 {
		cfg.BusyTimeout = 5 * time.Second
	}
	if cfg.Readers == 0 {
		cfg.Readers = 4
	}
	if cfg.CheckpointEvery <= 0 {
		cfg.CheckpointEvery = 250 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: data dir: %w", err)
	}
	path := filepath.Join(cfg.Dir, "fleethub.db")
	main := dsn(path, cfg)
	w, err := single(main)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	r, err := sql.Open("sqlite", main+"&mode=ro")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open reader: %w", err)
	}
	r.SetMaxOpenConns(cfg.Readers)
	r.SetMaxIdleConns(cfg.Readers)
	c, err := single(main)
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("sqlite: open checkpointer: %w", err)
	}
	s := &Store{w: w, r: r, c: c, path: path, checkpoints: make(chan struct{}), stmts: map[string]*sql.Stmt{}}
	s.checkpointed.Store(new(make(chan struct{})))
	if err := s.openParked(cfg); err != nil {
		close(s.checkpoints)
		s.Close()
		return nil, err
	}
	sc := conn{w: w, r: r, stmts: s.stmts} // stmts filled by prepare before any use but the migration's
	if err := sqlstore.Migrate(ctx, sc, sqlstore.SQLite, cfg.Now); err != nil {
		close(s.checkpoints)
		s.Close()
		return nil, err
	}
	if err := s.prepare(ctx); err != nil {
		close(s.checkpoints)
		s.Close()
		return nil, err
	}
	s.shared = sqlstore.New(sc, sqlstore.SQLite)
	s.appends, s.stopAppends, s.appendsStopped = make(chan *appendReq, maxAppendBatch), make(chan struct{}), make(chan struct{})
	go s.appendLoop(s.stopAppends)
	cctx, cancel := context.WithCancel(context.Background())
	s.stopCheckpoints = cancel
	go s.checkpointLoop(cctx, cfg.CheckpointEvery)
	return s, nil
}

// checkpointLoop copies the WAL into the database every period until ctx
// ends. A passive checkpoint copies what no reader still needs and never
// waits; what it leaves is copied next time. A failure is logged when a
// run of them starts and when it ends, not at every round.
func (s *Store) checkpointLoop(ctx context.Context, period time.Duration) {
	defer close(s.checkpoints)
	t := time.NewTicker(period)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := s.checkpoint(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && !failing:
			slog.Warn("sqlite: background checkpoint failed; every round tries again", "path", s.path, "err", err)
		case err == nil && failing:
			slog.Info("sqlite: background checkpoint works again", "path", s.path)
		}
		failing = err != nil
		close(*s.checkpointed.Swap(new(make(chan struct{}))))
	}
}

// checkpoint copies the WAL into the database and flushes the parked
// deliveries written since the last round to the disk. What fails is
// tried again the next round: a checkpoint that found the WAL busy copied
// nothing, and the spool keeps what it could not flush (Close flushes it
// once more).
func (s *Store) checkpoint(ctx context.Context) error {
	var errs []error
	if _, err := s.c.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		errs = append(errs, fmt.Errorf("wal: %w", err))
	}
	if err := s.parked.sp.Sync(); err != nil {
		errs = append(errs, fmt.Errorf("parked deliveries: %w", err))
	}
	return errors.Join(errs...)
}

// dsn is the connection string of a database file.
func dsn(path string, cfg Config) string {
	return fmt.Sprintf("file:%s?_pragma=journal_mode(WAL)&_pragma=busy_timeout(%d)&_pragma=synchronous(NORMAL)&_pragma=wal_autocheckpoint(%d)&_pragma=foreign_keys(1)&_txlock=immediate",
		path, cfg.BusyTimeout.Milliseconds(), walAutoCheckpoint)
}

// single opens a pool of one connection.
func single(dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	return db, nil
}

// writerStmts are prepared on the writer at Open and reused by every
// transaction after (txStmt, and sqlstore's transactions through
// conn): the hot writes (a webhook delivery's enqueue and outcome, a
// trip's upload) no longer parse their SQL each time, which was a
// quarter of an outcome's write and a third of a one-point upload's.
var writerStmts = []string{sqlEndpointDisabled, sqlEnqueueDelivery, sqlRecordDelivery, sqlRecordDeliveryBySeq,
	sqlstore.TripUpdate, sqlstore.TripUpdateSameStatus, sqlstore.InsertBlock, sqlstore.UpsertEvent, sqlstore.DeleteEvents}

// prepare prepares writerStmts on the writer; its one connection must be
// free (no transaction may wait for it meanwhile).
func (s *Store) prepare(ctx context.Context) error {
	for _, q := range writerStmts {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("sqlite: prepare: %w", err)
		}
		s.stmts[q] = st
	}
	return nil
}

// txStmt returns query as a statement of tx: the one prepared at Open,
// or prepared in tx if it is not one of writerStmts.
func (s *Store) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if st := s.stmts[query]; st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.r.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Stats reports pool figures.
func (s *Store) Stats() store.Stats {
	ws, rs := s.w.Stats(), s.r.Stats()
	return store.Stats{Driver: "sqlite", OpenConnections: ws.OpenConnections + rs.OpenConnections, InUse: ws.InUse + rs.InUse}
}

// Close closes both pools.
func (s *Store) Close() error {
	if s.stopAppends != nil {
		s.stopOnce.Do(func() { close(s.stopAppends) })
		<-s.appendsStopped
	}
	if s.stopCheckpoints != nil {
		s.stopCheckpoints()
	}
	<-s.checkpoints
	var errs []error
	for _, st := range s.stmts {
		errs = append(errs, st.Close())
	}
	errs = append(errs, s.c.Close(), s.r.Close(), s.w.Close())
	if s.parked != nil {
		errs = append(errs, s.parked.sp.Close())
	}
	return errors.Join(errs...)
}
