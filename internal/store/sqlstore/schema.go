package sqlstore

import (
	"context"
	"fmt"
	"time"
)

// The schema, one text for both databases: a token in braces stands for
// what the dialect names differently (Dialect.types):
//
//	{int64}          a 64-bit integer: times in unix ms, versions, offsets
//	{float}          a double
//	{bytes}          a blob
//	{key}            text compared in byte order: the ids listings page by
//	{serial}         an auto-incremented 64-bit integer primary key
//	{without rowid}  after a table whose primary key is its only index

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
		created_at {int64} NOT NULL,
		last_used_at {int64} NOT NULL DEFAULT 0,
		revoked_at {int64} NOT NULL DEFAULT 0
	);
	CREATE INDEX api_keys_scope ON api_keys(org, env, created_at);
	CREATE TABLE secrets (name TEXT PRIMARY KEY, value {bytes} NOT NULL);`,
	// Trips, their point blocks (one row per upload, keyed by trip and
	// block number) and their events.
	`CREATE TABLE trips (
		id {key} PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		vehicle_id TEXT NOT NULL,
		driver_id TEXT NOT NULL,
		status TEXT NOT NULL,
		start_time {int64} NOT NULL,
		end_time {int64} NOT NULL DEFAULT 0,
		start_location TEXT,
		end_location TEXT,
		metadata TEXT NOT NULL,
		metadata_history TEXT NOT NULL,
		state TEXT NOT NULL,
		distance_km {float} NOT NULL DEFAULT 0,
		duration_minutes {float} NOT NULL DEFAULT 0,
		avg_speed_kmh {float} NOT NULL DEFAULT 0,
		max_speed_kmh {float} NOT NULL DEFAULT 0,
		safety_score {float} NOT NULL DEFAULT 100,
		eco_score {float} NOT NULL DEFAULT 100,
		events_count INTEGER NOT NULL DEFAULT 0,
		locations_count INTEGER NOT NULL DEFAULT 0,
		version {int64} NOT NULL,
		created_at {int64} NOT NULL,
		updated_at {int64} NOT NULL
	);
	CREATE UNIQUE INDEX trips_open_vehicle ON trips(org, env, vehicle_id) WHERE status IN ('active', 'paused');
	CREATE INDEX trips_scope_start ON trips(org, env, start_time, id);
	CREATE INDEX trips_status ON trips(status);
	CREATE TABLE trip_points (
		trip_id TEXT NOT NULL,
		seq {int64} NOT NULL,
		first_ts {int64} NOT NULL,
		last_ts {int64} NOT NULL,
		count INTEGER NOT NULL,
		data {bytes} NOT NULL,
		PRIMARY KEY (trip_id, seq)
	){without rowid};
	CREATE TABLE trip_events (
		id {key} PRIMARY KEY,
		trip_id TEXT NOT NULL,
		type TEXT NOT NULL,
		ts {int64} NOT NULL,
		data TEXT NOT NULL
	);
	CREATE INDEX trip_events_trip ON trip_events(trip_id, ts);`,
	`CREATE TABLE streams (
		id {key} PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		kind TEXT NOT NULL,
		state TEXT NOT NULL,
		config TEXT NOT NULL,
		secret TEXT NOT NULL,
		version {int64} NOT NULL,
		created_at {int64} NOT NULL,
		updated_at {int64} NOT NULL,
		stopped_at {int64} NOT NULL DEFAULT 0
	);
	CREATE INDEX streams_updated ON streams(updated_at);`,
	// Webhook deliveries (deliveries.go): the durable queue and its log.
	`CREATE TABLE deliveries (
		seq {serial},
		id {key} NOT NULL UNIQUE,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		stream_id {key} NOT NULL,
		msg_offset {int64} NOT NULL,
		payload {bytes} NOT NULL,
		status TEXT NOT NULL,
		attempts INTEGER NOT NULL DEFAULT 0,
		next_attempt_at {int64} NOT NULL,
		queued_at {int64} NOT NULL,
		last_status_code INTEGER NOT NULL DEFAULT 0,
		last_error TEXT NOT NULL DEFAULT '',
		last_latency_ms {int64} NOT NULL DEFAULT 0,
		created_at {int64} NOT NULL,
		delivered_at {int64} NOT NULL DEFAULT 0,
		lease_owner TEXT NOT NULL DEFAULT '',
		lease_until {int64} NOT NULL DEFAULT 0
	);
	CREATE INDEX deliveries_due ON deliveries(stream_id, next_attempt_at) WHERE status IN ('pending', 'failed');
	CREATE INDEX deliveries_stream ON deliveries(stream_id, seq);
	CREATE INDEX deliveries_stream_status ON deliveries(stream_id, status, seq);
	CREATE INDEX deliveries_created ON deliveries(created_at);
	CREATE TABLE delivery_endpoints (
		stream_id {key} PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		disabled_at {int64} NOT NULL DEFAULT 0,
		url TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT ''
	);`,
	`CREATE TABLE device_settings (
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		device_id TEXT NOT NULL,
		settings TEXT NOT NULL,
		record TEXT NOT NULL,
		version {int64} NOT NULL,
		applied_at {int64} NOT NULL,
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
		created_at {int64} NOT NULL,
		updated_at {int64} NOT NULL
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
		version {int64} NOT NULL,
		created_at {int64} NOT NULL,
		updated_at {int64} NOT NULL
	);
	CREATE INDEX incidents_scope ON incidents(org, env, created_at);`,
	`CREATE TABLE alerts (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		status TEXT NOT NULL,
		doc TEXT NOT NULL,
		version {int64} NOT NULL,
		created_at {int64} NOT NULL,
		updated_at {int64} NOT NULL,
		expires_at {int64} NOT NULL
	);`,
	`CREATE TABLE optimizations (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		status TEXT NOT NULL,
		doc TEXT NOT NULL,
		version {int64} NOT NULL,
		created_at {int64} NOT NULL,
		updated_at {int64} NOT NULL
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
		created_at {int64} NOT NULL,
		updated_at {int64} NOT NULL
	);
	CREATE UNIQUE INDEX contacts_key ON contacts(org, env, dedup_key);
	CREATE INDEX contacts_scope ON contacts(org, env, created_at, id);`,
	`CREATE TABLE alert_schedule (
		alert_id TEXT NOT NULL,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		kind TEXT NOT NULL,
		level INTEGER NOT NULL,
		due_at {int64} NOT NULL,
		owner TEXT NOT NULL DEFAULT '',
		lease_until {int64} NOT NULL DEFAULT 0,
		done_at {int64} NOT NULL DEFAULT 0,
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
		next_attempt_at {int64} NOT NULL,
		last_error TEXT NOT NULL,
		owner TEXT NOT NULL,
		lease_until {int64} NOT NULL,
		created_at {int64} NOT NULL,
		updated_at {int64} NOT NULL
	);
	CREATE INDEX notifications_due ON notifications(status, next_attempt_at);
	CREATE INDEX notifications_ref ON notifications(org, env, ref, created_at);`,
	// alert_steps replaces alert_schedule with the channel of a delivery
	// step (a channel's delayed first delivery or one of its repeats) in
	// its key; the steps stored before are kept, with no channel.
	`CREATE TABLE alert_steps (
		alert_id TEXT NOT NULL,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		kind TEXT NOT NULL,
		channel TEXT NOT NULL,
		level INTEGER NOT NULL,
		due_at {int64} NOT NULL,
		owner TEXT NOT NULL DEFAULT '',
		lease_until {int64} NOT NULL DEFAULT 0,
		done_at {int64} NOT NULL DEFAULT 0,
		PRIMARY KEY (alert_id, kind, channel, level)
	);
	INSERT INTO alert_steps(alert_id, org, env, kind, channel, level, due_at, owner, lease_until, done_at)
		SELECT alert_id, org, env, kind, '', level, due_at, owner, lease_until, done_at FROM alert_schedule;
	DROP TABLE alert_schedule;
	CREATE INDEX alert_steps_due ON alert_steps(done_at, due_at);`,
	// Vehicle profiles (vehicles.go): fleet membership and fuel model.
	`CREATE TABLE vehicles (
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		id {key} NOT NULL,
		fleet_id TEXT NOT NULL,
		doc TEXT NOT NULL,
		created_at {int64} NOT NULL,
		updated_at {int64} NOT NULL,
		PRIMARY KEY (org, env, id)
	);
	CREATE INDEX vehicles_fleet ON vehicles(org, env, fleet_id, id);`,
	// Browser tokens minted (tokens.go): what their revocation needs.
	`CREATE TABLE browser_tokens (
		id TEXT PRIMARY KEY,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		key_id TEXT NOT NULL,
		scopes TEXT NOT NULL,
		created_at {int64} NOT NULL,
		expires_at {int64} NOT NULL,
		revoked_at {int64} NOT NULL DEFAULT 0
	);
	CREATE INDEX browser_tokens_expiry ON browser_tokens(expires_at);`,
	// Parked webhook deliveries (store.Delivery Park) on PostgreSQL: a
	// narrow table beside the queue, two B-trees a row where a queued
	// delivery has six, moved into the queue as its endpoint can send
	// (SQLite parks in a spool and leaves this table empty).
	`CREATE TABLE parked_deliveries (
		seq {serial},
		stream_id {key} NOT NULL,
		id {key} NOT NULL,
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		msg_offset {int64} NOT NULL,
		payload {bytes} NOT NULL,
		next_attempt_at {int64} NOT NULL,
		queued_at {int64} NOT NULL,
		created_at {int64} NOT NULL
	);
	CREATE INDEX parked_deliveries_stream ON parked_deliveries(stream_id, seq);`,
	// A stream's deliveries by status only while they are not delivered
	// (deliveries.go, OpenStatus): most rows are delivered, and with
	// them in this index every outcome moved an entry; the delivered
	// ones are counted as all of a stream's less the others.
	`DROP INDEX deliveries_stream_status;
	CREATE INDEX deliveries_open ON deliveries(stream_id, status, seq)
		WHERE status = 'pending' OR status = 'failed' OR status = 'dead_lettered' OR status = 'disabled';`,
	// A vehicle's trips by start time: a trip's start reads the
	// vehicle's latest trip (its sequence, odometer and fuel carry on),
	// which through trips_scope_start walked every trip of the
	// organization for a vehicle new to it.
	`CREATE INDEX trips_vehicle_start ON trips(org, env, vehicle_id, start_time, id);`,
	// Daily speeding summaries (speeding.go): the episodes of devices
	// whose speeding alerts are a daily summary, and one claim per
	// device and day that sends its summary once.
	`CREATE TABLE speeding_episodes (
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		id {key} NOT NULL,
		device_id TEXT NOT NULL,
		vehicle_id TEXT NOT NULL,
		driver_id TEXT NOT NULL,
		trip_id TEXT NOT NULL,
		start_at {int64} NOT NULL,
		duration_seconds {float} NOT NULL,
		max_speed_kmh {float} NOT NULL,
		limit_kmh {float} NOT NULL,
		day TEXT NOT NULL,
		summary_day TEXT NOT NULL,
		sent_at {int64} NOT NULL DEFAULT 0,
		PRIMARY KEY (org, env, id)
	);
	CREATE INDEX speeding_episodes_pending ON speeding_episodes(sent_at, summary_day);
	CREATE INDEX speeding_episodes_summary ON speeding_episodes(org, env, device_id, summary_day, start_at);
	CREATE TABLE speeding_summaries (
		org TEXT NOT NULL,
		env TEXT NOT NULL,
		device_id TEXT NOT NULL,
		day TEXT NOT NULL,
		owner TEXT NOT NULL,
		lease_until {int64} NOT NULL,
		sent_at {int64} NOT NULL DEFAULT 0,
		PRIMARY KEY (org, env, device_id, day)
	);`,
	// Retention of the daily speeding summaries (speeding.go,
	// PruneSpeedingSummaries): the rows of the days past it are found by
	// day, not by a walk of every row.
	`CREATE INDEX speeding_episodes_day ON speeding_episodes(summary_day);
	CREATE INDEX speeding_summaries_day ON speeding_summaries(day);`,
}

// Migrate applies the pending migrations of db, a database of dialect d,
// in one transaction (after the dialect's migration lock), recording each
// version in schema_migrations with now's time. The lock is taken before
// anything else, creating schema_migrations included: concurrent CREATE
// TABLE IF NOT EXISTS can itself fail on PostgreSQL with a unique
// violation on the catalog.
func Migrate(ctx context.Context, db Conn, d *Dialect, now func() time.Time) error {
	return migrate(ctx, db, d, now, len(migrations))
}

// migrate applies the pending migrations up to version upto, as Migrate.
func migrate(ctx context.Context, db Conn, d *Dialect, now func() time.Time, upto int) error {
	s := New(db, d)
	return s.inTx(ctx, "migrate", func(tx Querier) error {
		if d.lockMigrations != "" {
			if _, err := tx.Exec(ctx, d.lockMigrations); err != nil {
				return fmt.Errorf("lock: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, d.types.Replace(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at {int64} NOT NULL)`)); err != nil {
			return fmt.Errorf("migrations table: %w", err)
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("version: %w", err)
		}
		for v := current + 1; v <= upto; v++ {
			// No arguments: pgx sends it with the simple protocol, which
			// allows several statements in one migration.
			if _, err := tx.Exec(ctx, d.types.Replace(migrations[v-1])); err != nil {
				return fmt.Errorf("migration %d: %w", v, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`, v, now().UnixMilli()); err != nil {
				return fmt.Errorf("migration %d: %w", v, err)
			}
		}
		return nil
	})
}
