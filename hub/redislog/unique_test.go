package redislog_test

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestAppendUniqueSkipsIdsTheStreamTook: an entry whose id the stream
// already took is not appended again and answers its earlier offset;
// entries without an id always are; another stream's ids are its own.
func TestAppendUniqueSkipsIdsTheStreamTook(t *testing.T) {
	l := newLog(t, fmt.Sprintf("fleethub:test:unique:%d:", time.Now().UnixNano()))
	ctx := t.Context()
	d := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, x := range s {
			out[i] = []byte(x)
		}
		return out
	}
	offs, err := l.AppendUnique(ctx, "s1", d("a", "b"), []string{"evt-a", "evt-b"}, time.Minute)
	if err != nil || !slices.Equal(offs, []int64{1, 2}) {
		t.Fatalf("first append: %v, %v; want [1 2]", offs, err)
	}
	offs, err = l.AppendUnique(ctx, "s1", d("b again", "c", "no id"), []string{"evt-b", "evt-c", ""}, time.Minute)
	if err != nil || !slices.Equal(offs, []int64{2, 3, 4}) {
		t.Fatalf("second append: %v, %v; want [2 3 4]", offs, err)
	}
	ents, err := l.Read(ctx, "s1", 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, string(e.Data))
	}
	if want := []string{"a", "b", "c", "no id"}; !slices.Equal(got, want) {
		t.Fatalf("log holds %q, want %q", got, want)
	}
	if offs, err := l.AppendUnique(ctx, "s2", d("b in s2"), []string{"evt-b"}, time.Minute); err != nil || !slices.Equal(offs, []int64{1}) {
		t.Fatalf("another stream: %v, %v; want [1]", offs, err)
	}
	if _, err := l.AppendUnique(ctx, "s1", d("x"), nil, time.Minute); err == nil {
		t.Fatal("ids of another length accepted")
	}
}
