package sqlstore

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/store"
)

func TestRebind(t *testing.T) {
	for _, c := range []struct{ in, pg string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c IN (?, ?)`, `SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)`},
		{`SELECT '?', "a?b", 'it''s ?' FROM t WHERE x = ?`, `SELECT '?', "a?b", 'it''s ?' FROM t WHERE x = $1`},
		{`status = ANY(?::text[]) LIMIT ?`, `status = ANY($1::text[]) LIMIT $2`},
	} {
		if got := Postgres.Rebind(c.in); got != c.pg {
			t.Errorf("Postgres.Rebind(%q) = %q, want %q", c.in, got, c.pg)
		}
		if got := SQLite.Rebind(c.in); got != c.in {
			t.Errorf("SQLite.Rebind(%q) = %q, want it unchanged", c.in, got)
		}
	}
}

func TestIn(t *testing.T) {
	vals := []string{"a", "b", "c"}
	q, args := Postgres.In("id", vals)
	if q != "id = ANY(?::text[])" || len(args) != 1 || !slices.Equal(args[0].([]string), vals) {
		t.Errorf("Postgres.In = %q %v", q, args)
	}
	q, args = SQLite.In("id", vals)
	if q != "id IN (?,?,?)" || !slices.Equal(args, []any{"a", "b", "c"}) {
		t.Errorf("SQLite.In = %q %v", q, args)
	}
}

func TestChunks(t *testing.T) {
	vals := make([]string, 1234)
	for _, c := range []struct {
		d    *Dialect
		want []int
	}{{Postgres, []int{1234}}, {SQLite, []int{500, 500, 234}}} {
		var got []int
		if err := c.d.chunks(vals, func(part []string) error { got = append(got, len(part)); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s chunks of %d: %v, want %v", c.d.Name, len(vals), got, c.want)
		}
	}
}

// released are digests of the migrations as each database runs them
// (whitespace collapsed): a released migration never changes, in either
// dialect, since databases recorded it as applied.
var released = map[string][]string{
	"postgres": {"2cb20768e179", "f52f472970fa", "ac1ba571ec75", "37ad5e93fc23", "a52e6dba619f", "953920c5e777",
		"9a8a30851bd6", "a9fd692942f8", "753b2ba8a728", "fdcb7c7e41a8", "f487783b0589", "61510cb51eea", "83d7e1fed603",
		"4c95bce9eb29"},
	"sqlite": {"dee3b1f4e4fa", "fe95584754cb", "9d76be621d2c", "b8f65c37c6a0", "434432344aad", "90e31ffea813",
		"5a6dd991ec79", "73dcb78b42c4", "dd7a022521e2", "5c954cc97a3e", "1d2a6799953c", "f6c3da60588a", "cf518d0c824a",
		"0a259137d9ef"},
}

func TestMigrationsReleased(t *testing.T) {
	for _, d := range []*Dialect{Postgres, SQLite} {
		want := released[d.Name]
		if len(migrations) < len(want) {
			t.Fatalf("%d migrations, %d released", len(migrations), len(want))
		}
		for i, m := range migrations {
			ddl := d.types.Replace(m)
			if strings.ContainsAny(ddl, "{}") {
				t.Errorf("%s migration %d keeps a type token: %s", d.Name, i+1, ddl)
			}
			h := sha256.Sum256([]byte(strings.Join(strings.Fields(ddl), " ")))
			if got := hex.EncodeToString(h[:6]); i < len(want) && got != want[i] {
				t.Errorf("%s migration %d digest %s, want %s: a released migration changed", d.Name, i+1, got, want[i])
			}
		}
	}
}

// deliveries_open holds every status but delivered: CountDeliveries counts
// the delivered ones as all of a stream's less those.
func TestOpenStatusIsEveryStatusButDelivered(t *testing.T) {
	for _, st := range store.DeliveryStatuses {
		in := strings.Contains(OpenStatus, "status = '"+st+"'")
		if in == (st == store.DeliveryDelivered) {
			t.Errorf("status %q: in OpenStatus %v", st, in)
		}
	}
	if n := strings.Count(OpenStatus, "status = '"); n != len(store.DeliveryStatuses)-1 {
		t.Errorf("OpenStatus names %d statuses: %s", n, OpenStatus)
	}
}
