package geocode_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/geocode"
)

// opened opens the files with a saved index under dir and returns what
// the geocoder logged.
func opened(t *testing.T, dir string, files ...string) (*geocode.Index, string) {
	t.Helper()
	var log bytes.Buffer
	ix, err := geocode.Open(geocode.Config{Files: files, Dir: dir, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return ix, log.String()
}

func savedFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "geocode", "addresses-*.idx"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// answers is what an index says to a few queries of every kind.
func answers(ix *geocode.Index) []any {
	var out []any
	for _, q := range []string{"240-16 Bradock Avenue", "12 N Sta", "90-05 212th St Glen Oaks NY", "Westerville", "240-99 Braddock Avenue"} {
		out = append(out, ix.Search(q, 10), ix.Autocomplete(q, 5), ix.Validate(q))
	}
	name, ok := ix.Nearest(40.74180, -73.71702, 250)
	return append(out, name, ok)
}

// A restart reads the saved index instead of the files, and answers the
// same.
func TestOpenSavesAndRestarts(t *testing.T) {
	dir := t.TempDir()
	built, log := opened(t, dir, fixture)
	if !strings.Contains(log, "index built") || len(savedFiles(t, dir)) != 1 {
		t.Fatalf("first start: %s %v", log, savedFiles(t, dir))
	}
	read, log := opened(t, dir, fixture)
	if !strings.Contains(log, "saved index read") {
		t.Fatalf("restart did not read the saved index: %s", log)
	}
	if !reflect.DeepEqual(answers(built), answers(read)) {
		t.Fatal("the saved index answers differently")
	}
}

// A changed input file is a new index; the old one is removed.
func TestOpenRebuildsWhenAFileChanges(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(p, src, 0o600); err != nil {
		t.Fatal(err)
	}
	opened(t, dir, p)
	before := savedFiles(t, dir)
	more := append(src, "-82.93460,40.11940,413,Applegate Lane,,Westerville,Franklin,OH,43081,fx-31,x\n"...)
	if err := os.WriteFile(p, more, 0o600); err != nil {
		t.Fatal(err)
	}
	ix, log := opened(t, dir, p)
	if !strings.Contains(log, "index built") || ix.Len() != 31 {
		t.Fatalf("changed file: %d addresses, %s", ix.Len(), log)
	}
	if after := savedFiles(t, dir); len(after) != 1 || after[0] == before[0] {
		t.Fatalf("saved indexes %v then %v", before, after)
	}
}

// A damaged saved index is rebuilt, never trusted.
func TestOpenRebuildsACorruptIndex(t *testing.T) {
	for _, damage := range []struct {
		name string
		f    func([]byte) []byte
	}{
		{"a flipped byte", func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-100] }},
		{"empty", func([]byte) []byte { return nil }},
		{"another file", func([]byte) []byte { return []byte("LON,LAT\n") }},
	} {
		t.Run(damage.name, func(t *testing.T) {
			dir := t.TempDir()
			want, _ := opened(t, dir, fixture)
			p := savedFiles(t, dir)[0]
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, damage.f(b), 0o600); err != nil {
				t.Fatal(err)
			}
			ix, log := opened(t, dir, fixture)
			if !strings.Contains(log, "not trusted") || !strings.Contains(log, "index built") {
				t.Fatalf("log: %s", log)
			}
			if !reflect.DeepEqual(answers(want), answers(ix)) {
				t.Fatal("the rebuilt index answers differently")
			}
			if _, log := opened(t, dir, fixture); !strings.Contains(log, "saved index read") {
				t.Fatalf("the rebuilt index was not saved: %s", log)
			}
		})
	}
}

// Without a directory nothing is saved; a directory that cannot be
// written is logged and the index still served.
func TestOpenWithoutADirectory(t *testing.T) {
	if ix, err := geocode.Open(geocode.Config{Files: []string{fixture}}); err != nil || ix.Len() != 30 {
		t.Fatalf("%v %v", ix, err)
	}
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ix, log := opened(t, blocker, fixture)
	if ix.Len() != 30 || !strings.Contains(log, "not saved") {
		t.Fatalf("%d %s", ix.Len(), log)
	}
	if _, err := geocode.Open(geocode.Config{}); err == nil {
		t.Fatal("no files accepted")
	}
	if _, err := geocode.Open(geocode.Config{Files: []string{"testdata/none.csv"}, Dir: t.TempDir()}); err == nil {
		t.Fatal("a missing file accepted")
	}
}
