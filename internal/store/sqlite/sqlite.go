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
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fleethub/fleethub/internal/store"

	_ "modernc.org/sqlite" // driver "sqlite"
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
	w      *sql.DB  // one connection: every write
	r      *sql.DB  // read pool
	c      *sql.DB  // one connection: background checkpoints
	parked *parking // parked webhook deliveries (parked.go)
	path   string

	stmts map[string]*sql.Stmt // writerStmts, prepared at Open; read-only after

	stopCheckpoints context.CancelFunc
	checkpoints     chan struct{} // closed when the checkpoint loop returned
}

var _ store.Backend = (*Store)(nil)

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
	if err := s.openParked(cfg); err != nil {
		close(s.checkpoints)
		s.Close()
		return nil, err
	}
	if err := s.migrate(ctx, cfg.Now); err != nil {
		close(s.checkpoints)
		s.Close()
		return nil, err
	}
	if err := s.prepare(ctx); err != nil {
		close(s.checkpoints)
		s.Close()
		return nil, err
	}
	cctx, cancel := context.WithCancel(context.Background())
	s.stopCheckpoints = cancel
	go s.checkpointLoop(cctx, cfg.CheckpointEvery)
	return s, nil
}

// checkpointLoop copies the WAL into the database every period until ctx
// ends. A passive checkpoint copies what no reader still needs and never
// waits; what it leaves is copied next time.
func (s *Store) checkpointLoop(ctx context.Context, period time.Duration) {
	defer close(s.checkpoints)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// errors (SQLITE_BUSY while another checkpoint runs, say) only
		// mean this round copied nothing; the next one tries again
		_, _ = s.c.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		_ = s.parked.sp.Sync() // what fails is synced next time, or at Close
	}
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
// transaction after (txStmt): the hot writes (a webhook delivery's
// enqueue and outcome) no longer parse their SQL each time, which was a
// quarter of an outcome's write.
var writerStmts = []string{sqlEndpointDisabled, sqlEnqueueDelivery, sqlRecordDelivery}

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

// migrations are applied in order; never edit a released one, append.
var migrations = []string{
	`CREATE TABLE api_keys (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		name TEXT NOT NULL,
		hash TEXT NOT NULL UNIQUE,
		hint TEXT NOT NULL,
		permissions TEXT NOT NULL,
		plan TEXT NOT NULL,
		rpm INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		last_used_at INTEGER NOT NULL DEFAULT 0,
		revoked_at INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX api_keys_scope ON api_keys(org, env, created_at);
	CREATE TABLE secrets (name TEXT PRIMARY KEY, value BLOB NOT NULL);`,
	`CREATE TABLE trips (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		vehicle_id TEXT NOT NULL,
		driver_id TEXT NOT NULL,
		status TEXT NOT NULL,
		start_time INTEGER NOT NULL,
		end_time INTEGER NOT NULL DEFAULT 0,
		start_location TEXT,
		end_location TEXT,
		metadata TEXT NOT NULL,
		metadata_history TEXT NOT NULL,
		state TEXT NOT NULL,
		distance_km REAL NOT NULL DEFAULT 0,
		duration_minutes REAL NOT NULL DEFAULT 0,
		avg_speed_kmh REAL NOT NULL DEFAULT 0,
		max_speed_kmh REAL NOT NULL DEFAULT 0,
		safety_score REAL NOT NULL DEFAULT 100,
		eco_score REAL NOT NULL DEFAULT 100,
		events_count INTEGER NOT NULL DEFAULT 0,
		locations_count INTEGER NOT NULL DEFAULT 0,
		version INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE UNIQUE INDEX trips_open_vehicle ON trips(org, env, vehicle_id) WHERE status IN ('active', 'paused');
	CREATE INDEX trips_scope_start ON trips(org, env, start_time, id);
	CREATE INDEX trips_status ON trips(status);
	CREATE TABLE trip_points (
		trip_id TEXT NOT NULL,
		seq INTEGER NOT NULL,
		first_ts INTEGER NOT NULL,
		last_ts INTEGER NOT NULL,
		count INTEGER NOT NULL,
		data BLOB NOT NULL,
		PRIMARY KEY (trip_id, seq)
	) WITHOUT ROWID;
	CREATE TABLE trip_events (
		id TEXT PRIMARY KEY,
		trip_id TEXT NOT NULL,
		type TEXT NOT NULL,
		ts INTEGER NOT NULL,
		data TEXT NOT NULL
	);
	CREATE INDEX trip_events_trip ON trip_events(trip_id, ts);`,
	`CREATE TABLE streams (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		kind TEXT NOT NULL,
		state TEXT NOT NULL,
		config TEXT NOT NULL,
		secret TEXT NOT NULL,
		version INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		stopped_at INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX streams_updated ON streams(updated_at);`,
	// Webhook deliveries (deliveries.go): the durable queue and its log.
	`CREATE TABLE deliveries (
		seq INTEGER PRIMARY KEY AUTOINCREMENT,
		id TEXT NOT NULL UNIQUE,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		stream_id TEXT NOT NULL,
		msg_offset INTEGER NOT NULL,
		payload BLOB NOT NULL,
		status TEXT NOT NULL,
		attempts INTEGER NOT NULL DEFAULT 0,
		next_attempt_at INTEGER NOT NULL,
		queued_at INTEGER NOT NULL,
		last_status_code INTEGER NOT NULL DEFAULT 0,
		last_error TEXT NOT NULL DEFAULT '',
		last_latency_ms INTEGER NOT NULL DEFAULT 0,
		created_at INTEGER NOT NULL,
		delivered_at INTEGER NOT NULL DEFAULT 0,
		lease_owner TEXT NOT NULL DEFAULT '',
		lease_until INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX deliveries_due ON deliveries(stream_id, next_attempt_at) WHERE status IN ('pending', 'failed');
	CREATE INDEX deliveries_stream ON deliveries(stream_id, seq);
	CREATE INDEX deliveries_stream_status ON deliveries(stream_id, status, seq);
	CREATE INDEX deliveries_created ON deliveries(created_at);
	CREATE TABLE delivery_endpoints (
		stream_id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		disabled_at INTEGER NOT NULL DEFAULT 0,
		url TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT ''
	);`,
	`CREATE TABLE device_settings (
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		device_id TEXT NOT NULL,
		settings TEXT NOT NULL,
		record TEXT NOT NULL,
		version INTEGER NOT NULL,
		applied_at INTEGER NOT NULL,
		PRIMARY KEY (org, env, device_id)
	);`,
	`CREATE TABLE geofences (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		name TEXT NOT NULL,
		type TEXT NOT NULL,
		area TEXT NOT NULL,
		metadata TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE INDEX geofences_scope ON geofences(org, env, created_at);`,
	`CREATE TABLE incidents (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		status TEXT NOT NULL,
		severity TEXT NOT NULL,
		event_type TEXT NOT NULL,
		fleet_id TEXT NOT NULL,
		driver_id TEXT NOT NULL,
		doc TEXT NOT NULL,
		version INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE INDEX incidents_scope ON incidents(org, env, created_at);`,
	`CREATE TABLE alerts (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		status TEXT NOT NULL,
		doc TEXT NOT NULL,
		version INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		expires_at INTEGER NOT NULL
	);`,
	`CREATE TABLE optimizations (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		status TEXT NOT NULL,
		doc TEXT NOT NULL,
		version INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);`,
	`CREATE TABLE contacts (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		name TEXT NOT NULL,
		roles TEXT NOT NULL,
		links TEXT NOT NULL,
		dedup_key TEXT NOT NULL,
		doc TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE UNIQUE INDEX contacts_key ON contacts(org, env, dedup_key);
	CREATE INDEX contacts_scope ON contacts(org, env, created_at, id);`,
	`CREATE TABLE alert_schedule (
		alert_id TEXT NOT NULL,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		kind TEXT NOT NULL,
		level INTEGER NOT NULL,
		due_at INTEGER NOT NULL,
		owner TEXT NOT NULL DEFAULT '',
		lease_until INTEGER NOT NULL DEFAULT 0,
		done_at INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (alert_id, kind, level)
	);
	CREATE INDEX alert_schedule_due ON alert_schedule(done_at, due_at);`,
	`CREATE TABLE notifications (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		ref TEXT NOT NULL,
		recipient_id TEXT NOT NULL,
		channel TEXT NOT NULL,
		level INTEGER NOT NULL,
		body TEXT NOT NULL,
		status TEXT NOT NULL,
		attempts INTEGER NOT NULL,
		next_attempt_at INTEGER NOT NULL,
		last_error TEXT NOT NULL,
		owner TEXT NOT NULL,
		lease_until INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE INDEX notifications_due ON notifications(status, next_attempt_at);
	CREATE INDEX notifications_ref ON notifications(org, env, ref, created_at);`,
}

func (s *Store) migrate(ctx context.Context, now func() time.Time) error {
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("sqlite: migrations table: %w", err)
	}
	var current int
	if err := s.w.QueryRowContext(ctx, `SELECT COALESCE(MAX(version),0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("sqlite: migration version: %w", err)
	}
	for v := current + 1; v <= len(migrations); v++ {
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("sqlite: migration %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, migrations[v-1]); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: migration %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`, v, now().UnixMilli()); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: migration %d: %w", v, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqlite: migration %d: %w", v, err)
		}
	}
	return nil
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
