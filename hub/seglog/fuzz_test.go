package seglog

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// FuzzFrames feeds arbitrary bytes to the frame reader: it never panics,
// stops at the first bad frame, and every frame it accepts re-encodes to
// the same bytes.
func FuzzFrames(f *testing.F) {
	var good []byte
	good = appendFrame(good, &Record{Key: "fleethub.telemetry/3", Offset: 7, Time: time.Unix(1700000000, 5), Data: []byte(`{"a":1}`)})
	good = appendFrame(good, &Record{Key: "str_1", Offset: 1, Time: time.Unix(0, 0)})
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(bytes.Repeat([]byte{0xff}, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr := frameReader{r: bytes.NewReader(b)}
		var pos int64
		for {
			fm, at, err := fr.next()
			if at != pos {
				t.Fatalf("frame at %d, want %d", at, pos)
			}
			if errors.Is(err, io.EOF) || errors.Is(err, errTorn) {
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			again := appendFrame(nil, &Record{Key: fm.key, Offset: fm.offset, Time: fm.time, Data: fm.data})
			if !bytes.Equal(again, b[at:fr.pos]) {
				t.Fatalf("frame at %d does not re-encode to its bytes", at)
			}
			pos = fr.pos
		}
	})
}
