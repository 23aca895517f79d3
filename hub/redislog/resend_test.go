package redislog_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/redisresend"
)

// An append whose reply comes after the client's read timeout was run by
// Redis all the same; go-redis sends it again on a new connection. The
// second run answers the first's offsets and appends nothing, so no
// entry is in the stream twice (Append and AppendUnique, an entry
// without an id among them).
func TestAppendSentAgainAppendsOnce(t *testing.T) {
	ctx := context.Background()
	direct := newClient(t)
	prefix := "test:resend:" + time.Now().Format("150405.000000") + ":"
	warm := newLogOn(t, direct, prefix)
	// the scripts in Redis's cache, so that the first command through the
	// proxy is the append itself
	if _, err := warm.Append(ctx, "warm", [][]byte{[]byte("w")}); err != nil {
		t.Fatal(err)
	}
	if _, err := warm.AppendUnique(ctx, "warm", [][]byte{[]byte("w")}, []string{"w"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, unique := range []bool{false, true} {
		slow := redisresend.New(t, direct.Options())
		l := newLogOn(t, slow.Client, prefix)
		slow.Hold(t)
		id := "plain"
		if unique {
			id = "unique"
		}
		data := [][]byte{[]byte("a"), []byte("b")}
		if unique {
			offs, err := l.AppendUnique(ctx, id, data, []string{"", "m1"}, time.Minute)
			if err != nil || len(offs) != 2 || offs[0] != 1 || offs[1] != 2 {
				t.Fatalf("AppendUnique sent again: offsets %v, %v; want [1 2]", offs, err)
			}
		} else if last, err := l.Append(ctx, id, data); err != nil || last != 2 {
			t.Fatalf("Append sent again: last offset %d, %v; want 2", last, err)
		}
		// both runs are done: Redis ran the first before its reply was
		// held, the second before the call returned
		n, err := direct.XLen(ctx, prefix+"{"+id+"}:log").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("%s: the stream holds %d entries, want the 2 appended once", id, n)
		}
	}
}
