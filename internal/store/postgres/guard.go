package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleethub/fleethub/internal/breaker"
)

// db is the pool as the store uses it: with a breaker, every call fails
// at once with breaker.ErrOpen while the breaker is open, a call the
// database did not answer counts as a failure, and each call is bounded
// by timeout, so that a database that stops answering without closing
// its connections (a stopped process) fails calls instead of holding
// them. Calls inside a transaction are neither counted nor bounded; its
// Begin is.
//
// The breaker also pings the database every watchEvery while closed, on a
// connection of its own (so a busy pool never delays the ping), and the
// calls in flight when it opens are cancelled and fail with
// breaker.ErrOpen: a database that stops answering holds requests for
// at most about 0.75 s (the ping's interval and timeout) instead of the
// call timeout.
type db struct {
	pool    *pgxpool.Pool
	b       *breaker.Breaker // nil: no breaker, no timeout
	ping    *pinger          // the breaker's probe; nil without a breaker
	timeout time.Duration
}

// bound returns ctx limited to the call timeout when there is a breaker,
// and ended when the breaker opens.
func (d *db) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if d.b == nil || d.timeout <= 0 {
		return ctx, func() {}
	}
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	stop := context.AfterFunc(d.b.Live(), cancel)
	return cctx, func() { stop(); cancel() }
}

// opened wraps err with breaker.ErrOpen when the call was cut short by the
// breaker opening (its caller still waiting), so it answers as any call
// refused by an open breaker.
func (d *db) opened(ctx context.Context, err error) error {
	if err != nil && d.b != nil && ctx.Err() == nil && d.b.State() == breaker.Open && !errors.Is(err, breaker.ErrOpen) {
		return fmt.Errorf("%w: %w", breaker.ErrOpen, err)
	}
	return err
}

func (d *db) allow() error {
	if d.b == nil {
		return nil
	}
	return d.b.Allow()
}

// record counts err for the breaker; a caller that gave up is not counted.
func (d *db) record(ctx context.Context, err error) {
	switch {
	case d.b == nil || ctx.Err() != nil:
	case unavailable(err):
		d.b.Failure(err)
	default:
		d.b.Success()
	}
}

func (d *db) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := d.allow(); err != nil {
		return pgconn.CommandTag{}, err
	}
	cctx, cancel := d.bound(ctx)
	defer cancel()
	tag, err := d.pool.Exec(cctx, sql, args...)
	d.record(ctx, err)
	return tag, d.opened(ctx, err)
}

func (d *db) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := d.allow(); err != nil {
		return nil, err
	}
	cctx, cancel := d.bound(ctx)
	rows, err := d.pool.Query(cctx, sql, args...)
	d.record(ctx, err)
	if err != nil {
		cancel()
		return rows, d.opened(ctx, err)
	}
	return boundRows{Rows: rows, cancel: cancel}, nil
}

func (d *db) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := d.allow(); err != nil {
		return errRow{err}
	}
	cctx, cancel := d.bound(ctx)
	return row{d: d, ctx: ctx, cancel: cancel, r: d.pool.QueryRow(cctx, sql, args...)}
}

func (d *db) Begin(ctx context.Context) (pgx.Tx, error) {
	if err := d.allow(); err != nil {
		return nil, err
	}
	cctx, cancel := d.bound(ctx)
	defer cancel()
	tx, err := d.pool.Begin(cctx)
	d.record(ctx, err)
	return tx, d.opened(ctx, err)
}

func (d *db) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := d.allow(); err != nil {
		return errBatch{err}
	}
	return d.pool.SendBatch(ctx, b)
}

func (d *db) Stat() *pgxpool.Stat { return d.pool.Stat() }

// Close stops the breaker and its ping, then closes the pool, waiting for
// acquired connections to be released.
func (d *db) Close() error {
	var errs []error
	if d.b != nil {
		errs = append(errs, d.b.Close())
	}
	if d.ping != nil {
		errs = append(errs, d.ping.close())
	}
	d.pool.Close()
	return errors.Join(errs...)
}

// The breaker's ping: its interval while closed, and its timeout. A local
// database answers a ping in well under a millisecond, even busy; 500 ms
// leaves room for a loaded machine's scheduling.
const (
	watchEvery  = 250 * time.Millisecond
	pingTimeout = 500 * time.Millisecond
)

// pinger pings the database on a connection of its own, made again after
// any failure.
type pinger struct {
	mu   sync.Mutex
	cfg  *pgx.ConnConfig
	conn *pgx.Conn
}

func (p *pinger) ping(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		c, err := pgx.ConnectConfig(ctx, p.cfg.Copy())
		if err != nil {
			return err
		}
		p.conn = c
	}
	if err := p.conn.Ping(ctx); err != nil {
		return errors.Join(err, p.drop())
	}
	return nil
}

// drop closes the connection without waiting for a database that may not
// answer.
func (p *pinger) drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := p.conn.Close(ctx)
	p.conn = nil
	if err != nil {
		return fmt.Errorf("close the ping's connection: %w", err)
	}
	return nil
}

func (p *pinger) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		return nil
	}
	return p.drop()
}

// row records the outcome of its Scan and then ends its bound.
type row struct {
	d      *db
	ctx    context.Context
	cancel context.CancelFunc
	r      pgx.Row
}

func (r row) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	r.cancel()
	r.d.record(r.ctx, err)
	return r.d.opened(r.ctx, err)
}

// boundRows ends its bound when closed.
type boundRows struct {
	pgx.Rows
	cancel context.CancelFunc
}

func (r boundRows) Close() {
	r.Rows.Close()
	r.cancel()
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

type errBatch struct{ err error }

func (b errBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, b.err }
func (b errBatch) Query() (pgx.Rows, error)         { return nil, b.err }
func (b errBatch) QueryRow() pgx.Row                { return errRow(b) }
func (b errBatch) Close() error                     { return b.err }
func (b errBatch) Tx() pgx.Tx                       { return nil }

// unavailable reports whether err means the database did not answer: no
// connection, a broken one, a timeout (the call's bound included), a
// server shutting down or not yet taking connections, or an open breaker.
func unavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, breaker.ErrOpen) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "53300": // admin shutdown, crash shutdown, cannot connect now, too many connections
			return true
		}
		return len(pgErr.Code) == 5 && pgErr.Code[:2] == "08" // connection exception
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connErr) || errors.As(err, &netErr) || pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}
