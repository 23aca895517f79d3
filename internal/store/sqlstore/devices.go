package sqlstore

import (
	"context"

	"github.com/fleethub/fleethub/internal/store"
)

// Device settings (store.Devices).

// PutDeviceSettings stores a device's settings under the version rule.
func (s *Store) PutDeviceSettings(ctx context.Context, d store.DeviceSettings, prev int64) error {
	var n int64
	var err error
	if prev == 0 {
		n, err = s.w.Exec(ctx, `INSERT INTO device_settings(org, env, device_id, settings, record, version, applied_at) VALUES (?, ?, ?, ?, ?, 1, ?)
			ON CONFLICT (org, env, device_id) DO NOTHING`, d.Org, d.Env, d.DeviceID, string(d.Settings), string(d.Record), MS(d.AppliedAt))
	} else {
		n, err = s.w.Exec(ctx, `UPDATE device_settings SET settings = ?, record = ?, version = version + 1, applied_at = ?
			WHERE org = ? AND env = ? AND device_id = ? AND version = ?`, string(d.Settings), string(d.Record), MS(d.AppliedAt), d.Org, d.Env, d.DeviceID, prev)
	}
	return s.wrap("put device settings", changed(n, err, store.ErrConflict))
}

// GetDeviceSettings reads a device's settings.
func (s *Store) GetDeviceSettings(ctx context.Context, sc store.Scope, id string) (store.DeviceSettings, error) {
	d := store.DeviceSettings{Org: sc.Org, Env: sc.Env, DeviceID: id}
	var settings, record string
	var at int64
	err := s.r.QueryRow(ctx, `SELECT settings, record, version, applied_at FROM device_settings WHERE org = ? AND env = ? AND device_id = ?`,
		sc.Org, sc.Env, id).Scan(&settings, &record, &d.Version, &at)
	if err != nil {
		return d, s.wrap("get device settings", err)
	}
	d.Settings, d.Record, d.AppliedAt = []byte(settings), []byte(record), FromMS(at)
	return d, nil
}
