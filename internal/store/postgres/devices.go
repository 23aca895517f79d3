package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fleethub/fleethub/internal/store"
)

// PutDeviceSettings stores a device's settings under the version rule.
func (s *Store) PutDeviceSettings(ctx context.Context, d store.DeviceSettings, prev int64) error {
	var tag pgconn.CommandTag
	var err error
	if prev == 0 {
		tag, err = s.pool.Exec(ctx, `INSERT INTO device_settings(org, env, device_id, settings, record, version, applied_at) VALUES ($1,$2,$3,$4,$5,1,$6)
			ON CONFLICT (org, env, device_id) DO NOTHING`, d.Org, d.Env, d.DeviceID, string(d.Settings), string(d.Record), ms(d.AppliedAt))
	} else {
		tag, err = s.pool.Exec(ctx, `UPDATE device_settings SET settings = $1, record = $2, version = version + 1, applied_at = $3
			WHERE org = $4 AND env = $5 AND device_id = $6 AND version = $7`, string(d.Settings), string(d.Record), ms(d.AppliedAt), d.Org, d.Env, d.DeviceID, prev)
	}
	if err != nil {
		return wrap("put device settings", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("put device settings", store.ErrConflict)
	}
	return nil
}

// GetDeviceSettings reads a device's settings.
func (s *Store) GetDeviceSettings(ctx context.Context, sc store.Scope, id string) (store.DeviceSettings, error) {
	d := store.DeviceSettings{Org: sc.Org, Env: sc.Env, DeviceID: id}
	var settings, record string
	var at int64
	err := s.pool.QueryRow(ctx, `SELECT settings, record, version, applied_at FROM device_settings WHERE org = $1 AND env = $2 AND device_id = $3`,
		sc.Org, sc.Env, id).Scan(&settings, &record, &d.Version, &at)
	if err != nil {
		return d, wrap("get device settings", err)
	}
	d.Settings, d.Record, d.AppliedAt = []byte(settings), []byte(record), fromMS(at)
	return d, nil
}
