package postgres

import (
	"context"
	"time"

	"github.com/fleethub/fleethub/internal/store/sqlstore"
)

// TouchKeys records last use times in one statement, the ids and times
// bound as arrays; a time never moves back, and unknown ids are ignored.
// Nodes flushing the same keys at once wait for each other, in id order.
func (s *Store) TouchKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	ids := make([]string, 0, len(used))
	ats := make([]int64, 0, len(used))
	for id, at := range used {
		ids = append(ids, id)
		ats = append(ats, sqlstore.MS(at))
	}
	// The rows are locked in id order first: a join over the unnested
	// arrays locks them in whatever order it meets them, and two nodes
	// flushing the same keys would deadlock.
	_, err := s.pool.Exec(ctx, `WITH l AS (
			SELECT id FROM api_keys WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE
		)
		UPDATE api_keys AS k
		SET last_used_at = GREATEST(k.last_used_at, u.at)
		FROM unnest($1::text[], $2::bigint[]) AS u(id, at), l
		WHERE k.id = u.id AND l.id = k.id`, ids, ats)
	return wrap("touch keys", err)
}
