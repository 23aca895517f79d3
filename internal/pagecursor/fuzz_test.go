package pagecursor_test

import (
	"testing"

	"github.com/fleethub/fleethub/internal/pagecursor"
)

// FuzzOpen: a cursor opens to the position it was sealed with under its
// listing's filters and under no other filters; any string a client sends
// as a cursor is refused or opens to a position, never a panic.
func FuzzOpen(f *testing.F) {
	f.Fuzz(func(t *testing.T, pos, a, b, sent string) {
		ha, hb := pagecursor.Hash("list", a), pagecursor.Hash("list", b)
		c := pagecursor.Seal(pos, ha)
		if got, ok := pagecursor.Open(c, ha); !ok || got != pos {
			t.Fatalf("Open(Seal(%q)) = %q, %v", pos, got, ok)
		}
		if _, ok := pagecursor.Open(c, hb); ok && a != b {
			t.Fatalf("a cursor of filter %q opened under filter %q", a, b)
		}
		if got, ok := pagecursor.Open(sent, ha); ok {
			if again, ok := pagecursor.Open(pagecursor.Seal(got, ha), ha); !ok || again != got {
				t.Fatalf("position %q of cursor %q does not seal back", got, sent)
			}
		}
	})
}
