package webhook

import (
	"bytes"
	"crypto/rand"
	"testing"
	"time"
)

// newKeys makes signing keys as the secret cache does: the current key
// and, when previous is set, the previous one until an hour from now.
func newKeys(tb testing.TB, previous bool) *signingKeys {
	k := &signingKeys{current: make([]byte, 24)}
	rand.Read(k.current)
	k.macs[0] = newMACPool(k.current)
	if previous {
		k.previous, k.previousUntil = make([]byte, 24), time.Now().Add(time.Hour)
		rand.Read(k.previous)
		k.macs[1] = newMACPool(k.previous)
	}
	return k
}

// The kept HMAC states sign as Sign does, however often they are reused,
// with one key and during a rotation's overlap.
func TestKeptMACsSignAsSign(t *testing.T) {
	body := []byte(`{"stream_id":"estr_1","offset":7,"message":{}}`)
	for _, previous := range []bool{false, true} {
		k := newKeys(t, previous)
		now := time.Now()
		for i := range 3 {
			id := "msg_" + string(rune('a'+i))
			if got, want := k.sign(now, id, 1767225600+int64(i), body), Sign(k.at(now), id, 1767225600+int64(i), body); got != want {
				t.Fatalf("previous %v, use %d: kept states signed %q, Sign %q", previous, i, got, want)
			}
		}
		if previous {
			if got, want := k.sign(now.Add(2*time.Hour), "msg_x", 1, body), Sign([][]byte{k.current}, "msg_x", 1, body); got != want {
				t.Fatalf("after the overlap: %q, want the current key's alone %q", got, want)
			}
		}
	}
}

func BenchmarkSignKept(b *testing.B) {
	body := bytes.Repeat([]byte(`{"stream_id":"estr_0123456789","offset":123456,"message":{"event_id":"e"}}`), 7)[:500]
	for _, c := range []struct {
		name     string
		previous bool
	}{{"OneSecret", false}, {"RotationOverlap", true}} {
		b.Run(c.name, func(b *testing.B) {
			k := newKeys(b, c.previous)
			now := time.Now()
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_ = k.sign(now, "msg_2KWPBgLlAfxdpx2AI54pPJ", 1767225600, body)
			}
		})
	}
}
