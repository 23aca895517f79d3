// Package postgres is the shared store: PostgreSQL through pgx/v5 and a
// pgxpool connection pool, for deployments with several nodes.
//
// The schema and the queries are those of store/sqlstore, shared with
// store/sqlite, in its Postgres dialect: Store embeds a sqlstore.Store
// over the pool (conn.go) and keeps here what PostgreSQL does its own way:
// the webhook queue's enqueue and outcomes bound as arrays in one
// statement (deliveries.go), a point upload in one batch or COPY
// (trips.go), key use times in one statement (keys.go). Migrations are
// applied by Open, all pending versions in one transaction that first
// takes a transaction-level advisory lock, so nodes starting at once apply
// each version exactly once and the others wait, then find nothing to do.
//
// Errors: a unique violation (SQLSTATE 23505) wraps store.ErrConflict, no
// rows wraps store.ErrNotFound, a database that did not answer (guard.go)
// wraps store.ErrUnavailable, anything else is wrapped as
// "postgres: <op>: <err>".
//
// A Store is safe for concurrent use, by any number of nodes on the same
// database: claims skip the rows other claims hold (FOR UPDATE SKIP
// LOCKED), and every write of a leased row checks the lease is still the
// writer's.
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

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleethub/fleethub/internal/breaker"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlstore"
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
	*shared
	pool *db
}

// shared is the SQL both backends share; embedded under this name, it
// adds no exported field to Store.
type shared = sqlstore.Store

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
		// the connections of the pool may have died with the database:
		// when the breaker opens they are all dropped, so the first calls
		// after it closes dial fresh ones instead of taking a dead one
		onChange := bc.OnChange
		bc.OnChange = func(from, to breaker.State) {
			if to == breaker.Open {
				pool.Reset()
			}
			if onChange != nil {
				onChange(from, to)
			}
		}
		s.pool.b = breaker.New(bc, s.pool.ping.ping)
		s.pool.timeout = cfg.CallTimeout
		if s.pool.timeout <= 0 {
			s.pool.timeout = defaultCallTimeout
		}
	}
	c := conn{d: s.pool}
	if err := sqlstore.Migrate(ctx, c, sqlstore.Postgres, time.Now); err != nil {
		return nil, errors.Join(err, s.pool.Close())
	}
	s.shared = sqlstore.New(c, sqlstore.Postgres)
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
	if err := s.pool.Close(); err != nil {
		return fmt.Errorf("postgres: close: %w", err)
	}
	return nil
}
