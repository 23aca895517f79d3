package webhook

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// The webhook-ids of a stream's entries sort as their offsets do, so the
// delivery log's unique index grows at its end; the same entry gets the
// same id, and another entry at the same offset (a log that started its
// offsets again) another one.
func TestDeliveryIDsSortByOffset(t *testing.T) {
	shape := regexp.MustCompile(`^msg_[-0-9A-Za-z_]{30}$`)
	rng := rand.New(rand.NewPCG(7, 7))
	offsets := []int64{0, 1, 2, 63, 64, 65, 4095, 4096, 1 << 30, 1<<48 - 1}
	for range 1000 {
		offsets = append(offsets, rng.Int64N(1<<48))
	}
	slices.Sort(offsets)
	offsets = slices.Compact(offsets)
	var prev string
	for i, off := range offsets {
		p := []byte(`{"stream_id":"estr_1","offset":` + strconv.FormatInt(off, 10) + `,"message":{}}`)
		id := deliveryID(off, p)
		if !shape.MatchString(id) {
			t.Fatalf("offset %d: id %q is not msg_ and 30 URL-safe characters", off, id)
		}
		if again := deliveryID(off, append([]byte(nil), p...)); again != id {
			t.Fatalf("offset %d: the same entry got %q and %q", off, id, again)
		}
		if other := deliveryID(off, append(p[:len(p)-2:len(p)-2], `{"a":1}}`...)); other == id {
			t.Fatalf("offset %d: two entries at the same offset share %q", off, id)
		}
		if i > 0 && id <= prev {
			t.Fatalf("offset %d: id %q does not sort after the previous offset's %q", off, id, prev)
		}
		prev = id
	}
}
