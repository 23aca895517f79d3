// Package postgres is the shared store: PostgreSQL through pgx/v5 and a
// pgxpool connection pool, for deployments with several nodes.
//
// The table layout is the one of store/sqlite: times are unix milliseconds
// in BIGINT columns, 0 when unset; permissions are JSON text. Migrations
// are applied by Open, all pending versions in one transaction that first
// takes a transaction-level advisory lock, so nodes starting at once apply
// each version exactly once and the others wait, then find nothing to do.
//
// Trips (trips.go) keep the same layout too: totals are DOUBLE PRECISION,
// JSON columns are TEXT so the bytes written are the bytes read, point
// blocks are BYTEA rows keyed by (trip_id, seq), and ids sort in byte
// order (COLLATE "C") so keyset listings page exactly as on SQLite.
//
// Errors: a unique violation (SQLSTATE 23505) wraps store.ErrConflict, no
// rows wraps store.ErrNotFound, a database that did not answer (guard.go)
// wraps store.ErrUnavailable, anything else is wrapped as
// "postgres: <op>: <err>".
//
// With Config.Breaker the pool sits behind a circuit breaker
// (internal/breaker): once a call finds the database gone, every call
// fails at once with store.ErrUnavailable, without waiting on a dial,
// until a background ping sees it back. The same ping runs every 250 ms
// while the breaker is closed, so a database that stops answering opens
// it within about 0.75 s (the ping's 500 ms timeout), and the calls then
// in flight end with it.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleethub/fleethub/internal/breaker"
	"github.com/fleethub/fleethub/internal/store"
)

// Config of the PostgreSQL store.
type Config struct {
	// URL is a libpq connection string or URL. Empty means the PG*
	// environment variables, as for psql. Runtime parameters such as
	// search_path may be set in it.
	URL string
	// MaxConns is the pool size. 0 keeps the URL's pool_max_conns or, without
	// it, pgxpool's default (the greater of 4 and the number of CPUs).
	MaxConns int32
	// Breaker, when set, puts the pool behind a circuit breaker with this
	// configuration; its probe is a ping. Nil: no breaker.
	Breaker *breaker.Config
	// CallTimeout bounds each call outside a transaction when Breaker is
	// set (default 10 s): a database that stops answering fails calls
	// and opens the breaker instead of holding requests.
	CallTimeout time.Duration
}

// defaultCallTimeout is Config.CallTimeout's default: far above any one
// query of the store, well below a client's patience.
const defaultCallTimeout = 10 * time.Second

// Store is the PostgreSQL backend.
type Store struct {
	pool *db
}

var _ store.Backend = (*Store)(nil)

// Open connects to the database in cfg.URL and applies pending migrations.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("postgres: config: %w", err)
	}
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	s := &Store{pool: &db{pool: pool}}
	if cfg.Breaker != nil {
		bc := *cfg.Breaker
		if bc.Watch == 0 {
			bc.Watch = watchEvery
		}
		if bc.ProbeTimeout == 0 {
			bc.ProbeTimeout = pingTimeout
		}
		s.pool.ping = &pinger{cfg: pool.Config().ConnConfig}
		s.pool.b = breaker.New(bc, s.pool.ping.ping)
		s.pool.timeout = cfg.CallTimeout
		if s.pool.timeout <= 0 {
			s.pool.timeout = defaultCallTimeout
		}
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

// Breaker is the store's circuit breaker; nil without Config.Breaker.
func (s *Store) Breaker() *breaker.Breaker { return s.pool.b }

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return wrap("ping", err)
	}
	return nil
}

// Stats reports pool figures.
func (s *Store) Stats() store.Stats {
	st := s.pool.Stat()
	return store.Stats{Driver: "postgresql", OpenConnections: int(st.TotalConns()), InUse: int(st.AcquiredConns())}
}

// Close closes the pool, waiting for acquired connections to be released.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// migrationLock is the pg_advisory_xact_lock key that serializes migrations
// across nodes: the first eight bytes of "fleethub" read as an int64.
const migrationLock int64 = 0x666c656574687562

// migrations are applied in order; never edit a released one, append.
// Version n is migrations[n-1].
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
		created_at BIGINT NOT NULL,
		last_used_at BIGINT NOT NULL DEFAULT 0,
		revoked_at BIGINT NOT NULL DEFAULT 0
	);
	CREATE INDEX api_keys_scope ON api_keys(org, env, created_at);
	CREATE TABLE secrets (name TEXT PRIMARY KEY, value BYTEA NOT NULL);`,
	// Trips, their point blocks and events: the tables of sqlite's
	// migration 2. Ids are COLLATE "C" so that listings break ties by id
	// in byte order, as SQLite does, whatever the database's collation.
	`CREATE TABLE trips (
		id TEXT COLLATE "C" PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		vehicle_id TEXT NOT NULL,
		driver_id TEXT NOT NULL,
		status TEXT NOT NULL,
		start_time BIGINT NOT NULL,
		end_time BIGINT NOT NULL DEFAULT 0,
		start_location TEXT,
		end_location TEXT,
		metadata TEXT NOT NULL,
		metadata_history TEXT NOT NULL,
		state TEXT NOT NULL,
		distance_km DOUBLE PRECISION NOT NULL DEFAULT 0,
		duration_minutes DOUBLE PRECISION NOT NULL DEFAULT 0,
		avg_speed_kmh DOUBLE PRECISION NOT NULL DEFAULT 0,
		max_speed_kmh DOUBLE PRECISION NOT NULL DEFAULT 0,
		safety_score DOUBLE PRECISION NOT NULL DEFAULT 100,
		eco_score DOUBLE PRECISION NOT NULL DEFAULT 100,
		events_count INTEGER NOT NULL DEFAULT 0,
		locations_count INTEGER NOT NULL DEFAULT 0,
		version BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE UNIQUE INDEX trips_open_vehicle ON trips(org, env, vehicle_id) WHERE status IN ('active', 'paused');
	CREATE INDEX trips_scope_start ON trips(org, env, start_time, id);
	CREATE INDEX trips_status ON trips(status);
	CREATE TABLE trip_points (
		trip_id TEXT NOT NULL,
		seq BIGINT NOT NULL,
		first_ts BIGINT NOT NULL,
		last_ts BIGINT NOT NULL,
		count INTEGER NOT NULL,
		data BYTEA NOT NULL,
		PRIMARY KEY (trip_id, seq)
	);
	CREATE TABLE trip_events (
		id TEXT COLLATE "C" PRIMARY KEY,
		trip_id TEXT NOT NULL,
		type TEXT NOT NULL,
		ts BIGINT NOT NULL,
		data TEXT NOT NULL
	);
	CREATE INDEX trip_events_trip ON trip_events(trip_id, ts);`,
	`CREATE TABLE streams (
		id TEXT COLLATE "C" PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		kind TEXT NOT NULL,
		state TEXT NOT NULL,
		config TEXT NOT NULL,
		secret TEXT NOT NULL,
		version BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL,
		stopped_at BIGINT NOT NULL DEFAULT 0
	);
	CREATE INDEX streams_updated ON streams(updated_at);`,
	// Webhook deliveries (deliveries.go): the tables of sqlite's
	// migration 4.
	`CREATE TABLE deliveries (
		seq BIGSERIAL PRIMARY KEY,
		id TEXT COLLATE "C" NOT NULL UNIQUE,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		stream_id TEXT COLLATE "C" NOT NULL,
		msg_offset BIGINT NOT NULL,
		payload BYTEA NOT NULL,
		status TEXT NOT NULL,
		attempts INTEGER NOT NULL DEFAULT 0,
		next_attempt_at BIGINT NOT NULL,
		queued_at BIGINT NOT NULL,
		last_status_code INTEGER NOT NULL DEFAULT 0,
		last_error TEXT NOT NULL DEFAULT '',
		last_latency_ms BIGINT NOT NULL DEFAULT 0,
		created_at BIGINT NOT NULL,
		delivered_at BIGINT NOT NULL DEFAULT 0,
		lease_owner TEXT NOT NULL DEFAULT '',
		lease_until BIGINT NOT NULL DEFAULT 0
	);
	CREATE INDEX deliveries_due ON deliveries(stream_id, next_attempt_at) WHERE status IN ('pending', 'failed');
	CREATE INDEX deliveries_stream ON deliveries(stream_id, seq);
	CREATE INDEX deliveries_stream_status ON deliveries(stream_id, status, seq);
	CREATE INDEX deliveries_created ON deliveries(created_at);
	CREATE TABLE delivery_endpoints (
		stream_id TEXT COLLATE "C" PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		disabled_at BIGINT NOT NULL DEFAULT 0,
		url TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT ''
	);`,
	`CREATE TABLE device_settings (
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		device_id TEXT NOT NULL,
		settings TEXT NOT NULL,
		record TEXT NOT NULL,
		version BIGINT NOT NULL,
		applied_at BIGINT NOT NULL,
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
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
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
		version BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE INDEX incidents_scope ON incidents(org, env, created_at);`,
	`CREATE TABLE alerts (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		status TEXT NOT NULL,
		doc TEXT NOT NULL,
		version BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL,
		expires_at BIGINT NOT NULL
	);`,
	`CREATE TABLE optimizations (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		status TEXT NOT NULL,
		doc TEXT NOT NULL,
		version BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
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
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE UNIQUE INDEX contacts_key ON contacts(org, env, dedup_key);
	CREATE INDEX contacts_scope ON contacts(org, env, created_at, id);`,
	`CREATE TABLE alert_schedule (
		alert_id TEXT NOT NULL,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		kind TEXT NOT NULL,
		level INTEGER NOT NULL,
		due_at BIGINT NOT NULL,
		owner TEXT NOT NULL DEFAULT '',
		lease_until BIGINT NOT NULL DEFAULT 0,
		done_at BIGINT NOT NULL DEFAULT 0,
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
		next_attempt_at BIGINT NOT NULL,
		last_error TEXT NOT NULL,
		owner TEXT NOT NULL,
		lease_until BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE INDEX notifications_due ON notifications(status, next_attempt_at);
	CREATE INDEX notifications_ref ON notifications(org, env, ref, created_at);`,
}

// migrate applies every pending migration in one transaction. The advisory
// lock is taken before anything else, including creating schema_migrations:
// concurrent CREATE TABLE IF NOT EXISTS can itself fail with a unique
// violation on the catalog.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return wrap("migrate", err)
	}
	defer tx.Rollback(ctx) // no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return wrap("migration lock", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return wrap("migrations table", err)
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return wrap("migration version", err)
	}
	for v := current + 1; v <= len(migrations); v++ {
		// No arguments: pgx sends it with the simple protocol, which allows
		// several statements in one migration.
		if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
			return wrap(fmt.Sprintf("migration %d", v), err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES ($1, $2)`, v, time.Now().UnixMilli()); err != nil {
			return wrap(fmt.Sprintf("migration %d", v), err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return wrap("migrate", err)
	}
	return nil
}

// uniqueViolation is the SQLSTATE of unique_violation.
const uniqueViolation = "23505"

// wrap maps err to the store's errors and prefixes the operation.
func wrap(op string, err error) error {
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("postgres: %s: %w", op, store.ErrNotFound)
	case errors.As(err, &pgErr) && pgErr.Code == uniqueViolation:
		return fmt.Errorf("postgres: %s: %w (constraint %s)", op, store.ErrConflict, pgErr.ConstraintName)
	case unavailable(err):
		return fmt.Errorf("postgres: %s: %w: %w", op, store.ErrUnavailable, err)
	default:
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
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
