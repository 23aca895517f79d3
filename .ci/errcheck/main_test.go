package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCases: the lines of testdata/mod/cases.go that end with "want" are
// reported, and only those.
func TestCases(t *testing.T) {
	dir, err := filepath.Abs("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	found, err := run(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]bool{}
	for _, f := range found {
		if filepath.Base(f.pos.Filename) != "cases.go" {
			t.Errorf("finding outside cases.go: %v", f.pos)
		}
		got[f.pos.Line] = true
	}
	src, err := os.Open(filepath.Join(dir, "cases.go"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	want := map[int]bool{}
	sc := bufio.NewScanner(src)
	for line := 1; sc.Scan(); line++ {
		if strings.HasSuffix(sc.Text(), "// want") {
			want[line] = true
		}
	}
	for l := range want {
		if !got[l] {
			t.Errorf("cases.go:%d: not reported", l)
		}
	}
	for l := range got {
		if !want[l] {
			t.Errorf("cases.go:%d: reported, not wanted", l)
		}
	}
	if len(want) == 0 {
		t.Fatal("no case wants a finding")
	}
}
