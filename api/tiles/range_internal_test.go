package tiles

import "testing"

// FuzzByteRange: any Range header against any body size is answered
// without a panic, and a single range lies within the body.
func FuzzByteRange(f *testing.F) {
	for _, s := range []string{"bytes=0-126", "bytes=5-", "bytes=-5", "bytes=-0", "bytes=9-5", "bytes=0-1,5-9", "items=0-1", "bytes=99999999999999999999-", "bytes= 1 - 2 ,", "bytes"} {
		f.Add(s, int64(1000))
	}
	f.Fuzz(func(t *testing.T, spec string, size int64) {
		if size < 1 {
			size = 1
		}
		first, last, kind := byteRange([]byte(spec), size)
		if kind == rangeOne && (first < 0 || last < first || last >= size) {
			t.Fatalf("%q of %d bytes: %d-%d", spec, size, first, last)
		}
	})
}
