package sqlstore

import (
	"context"
	"strconv"

	"github.com/fleethub/fleethub/internal/store"
)

// Vehicle profiles (store.Vehicles).

const vehicleCols = `id, org, env, fleet_id, doc, created_at, updated_at`

func scanVehicle(row Row) (store.Vehicle, error) {
	var v store.Vehicle
	var doc string
	var cr, up int64
	if err := row.Scan(&v.ID, &v.Org, &v.Env, &v.FleetID, &doc, &cr, &up); err != nil {
		return v, err
	}
	v.Doc, v.CreatedAt, v.UpdatedAt = []byte(doc), FromMS(cr), FromMS(up)
	return v, nil
}

// PutVehicle inserts or replaces a profile in one statement, keeping the
// creation time of a replaced one, and answers the row as stored.
func (s *Store) PutVehicle(ctx context.Context, v store.Vehicle) (store.Vehicle, error) {
	out, err := scanVehicle(s.w.QueryRow(ctx, `INSERT INTO vehicles(`+vehicleCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (org, env, id) DO UPDATE SET fleet_id = excluded.fleet_id, doc = excluded.doc, updated_at = excluded.updated_at
		RETURNING `+vehicleCols, v.ID, v.Org, v.Env, v.FleetID, string(v.Doc), MS(v.CreatedAt), MS(v.UpdatedAt)))
	return out, s.wrap("put vehicle", err)
}

// GetVehicle reads a profile of the scope.
func (s *Store) GetVehicle(ctx context.Context, sc store.Scope, id string) (store.Vehicle, error) {
	v, err := scanVehicle(s.r.QueryRow(ctx, `SELECT `+vehicleCols+` FROM vehicles WHERE org = ? AND env = ? AND id = ?`, sc.Org, sc.Env, id))
	return v, s.wrap("get vehicle", err)
}

// ListVehicles lists a scope's profiles in id order.
func (s *Store) ListVehicles(ctx context.Context, f store.VehicleFilter) ([]store.Vehicle, error) {
	q := `SELECT ` + vehicleCols + ` FROM vehicles WHERE org = ? AND env = ?`
	args := []any{f.Org, f.Env}
	if f.FleetID != "" {
		q += ` AND fleet_id = ?`
		args = append(args, f.FleetID)
	}
	if f.AfterID != "" {
		q += ` AND id > ?`
		args = append(args, f.AfterID)
	}
	q += ` ORDER BY id`
	if f.Limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(f.Limit)
	}
	rows, err := s.r.Query(ctx, q, args...)
	out, err := collect([]store.Vehicle{}, rows, err, scanVehicle)
	return out, s.wrap("list vehicles", err)
}

// ListVehicleFleets lists the profiles that name a fleet, of every scope.
func (s *Store) ListVehicleFleets(ctx context.Context, limit int) ([]store.VehicleFleet, error) {
	q := `SELECT org, env, id, fleet_id FROM vehicles WHERE fleet_id <> ''`
	if limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(limit)
	}
	rows, err := s.r.Query(ctx, q)
	out, err := collect([]store.VehicleFleet{}, rows, err, func(r Row) (store.VehicleFleet, error) {
		var v store.VehicleFleet
		err := r.Scan(&v.Org, &v.Env, &v.ID, &v.FleetID)
		return v, err
	})
	return out, s.wrap("list vehicle fleets", err)
}

// DeleteVehicle deletes a profile; ErrNotFound when absent.
func (s *Store) DeleteVehicle(ctx context.Context, sc store.Scope, id string) error {
	n, err := s.w.Exec(ctx, `DELETE FROM vehicles WHERE org = ? AND env = ? AND id = ?`, sc.Org, sc.Env, id)
	return s.wrap("delete vehicle", changed(n, err, store.ErrNotFound))
}
