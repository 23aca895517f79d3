package pagecursor

import "testing"

func TestSealOpen(t *testing.T) {
	a, b := Hash("trips", "active", ""), Hash("trips", "", "active")
	if a == b {
		t.Fatal("filters in other places hash alike")
	}
	c := Seal("1700000000000:trp_1", a)
	if pos, ok := Open(c, a); !ok || pos != "1700000000000:trp_1" {
		t.Errorf("Open under its filters: %q %v", pos, ok)
	}
	if _, ok := Open(c, b); ok {
		t.Error("a cursor opened under other filters")
	}
	for _, s := range []string{"", "!!", "bm90LWEtY3Vyc29y"} {
		if _, ok := Open(s, a); ok {
			t.Errorf("%q opened", s)
		}
	}
}
