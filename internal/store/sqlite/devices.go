package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/fleethub/fleethub/internal/store"
)

// PutDeviceSettings stores a device's settings under the version rule.
func (s *Store) PutDeviceSettings(ctx context.Context, d store.DeviceSettings, prev int64) error {
	var res sql.Result
	var err error
	if prev == 0 {
		res, err = s.w.ExecContext(ctx, `INSERT INTO device_settings(org, env, device_id, settings, record, version, applied_at) VALUES (?,?,?,?,?,1,?)
			ON CONFLICT(org, env, device_id) DO NOTHING`, d.Org, d.Env, d.DeviceID, string(d.Settings), string(d.Record), ms(d.AppliedAt))
	} else {
		res, err = s.w.ExecContext(ctx, `UPDATE device_settings SET settings = ?, record = ?, version = version + 1, applied_at = ?
			WHERE org = ? AND env = ? AND device_id = ? AND version = ?`, string(d.Settings), string(d.Record), ms(d.AppliedAt), d.Org, d.Env, d.DeviceID, prev)
	}
	if err != nil {
		return fmt.Errorf("sqlite: put device settings: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("sqlite: put device settings: %w", store.ErrConflict)
	}
	return nil
}

// GetDeviceSettings reads a device's settings.
func (s *Store) GetDeviceSettings(ctx context.Context, sc store.Scope, id string) (store.DeviceSettings, error) {
	d := store.DeviceSettings{Org: sc.Org, Env: sc.Env, DeviceID: id}
	var settings, record string
	var at int64
	err := s.r.QueryRowContext(ctx, `SELECT settings, record, version, applied_at FROM device_settings WHERE org = ? AND env = ? AND device_id = ?`,
		sc.Org, sc.Env, id).Scan(&settings, &record, &d.Version, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return d, store.ErrNotFound
	}
	if err != nil {
		return d, fmt.Errorf("sqlite: get device settings: %w", err)
	}
	d.Settings, d.Record, d.AppliedAt = []byte(settings), []byte(record), fromMS(at)
	return d, nil
}
