package main

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
)

// TestKeyHintNamesTheProgram: serve's hint for creating a key runs the
// program as it was started: a built binary by the name it was invoked
// by, and `go run ./cmd/fleethub` only for the binary go run builds in a
// go-build temporary directory (make run).
func TestKeyHintNamesTheProgram(t *testing.T) {
	for _, c := range []struct{ arg0, exe, want string }{
		{"./bin/fleethub", "/work/fleethub/bin/fleethub", "./bin/fleethub"},
		{"fleethub", "/usr/local/bin/fleethub", "fleethub"},
		{"/opt/my apps/fleethub", "/opt/my apps/fleethub", "'/opt/my apps/fleethub'"},
		{"/tmp/go-build1234567/b001/exe/fleethub", "/tmp/go-build1234567/b001/exe/fleethub", "go run ./cmd/fleethub"},
	} {
		if got := selfCommand(c.arg0, c.exe); got != c.want {
			t.Errorf("invoked as %q (%s): %q, want %q", c.arg0, c.exe, got, c.want)
		}
	}
}

// TestKeyHintOfABuiltBinary: the hint a built server prints, pasted into a
// shell in the directory it was started from, creates a key.
func TestKeyHintOfABuiltBinary(t *testing.T) {
	skipUnderRace(t)
	dir := t.TempDir()
	crashBuild(t, dir)
	srv := exec.Command("./fleethub", "serve", "--addr", "127.0.0.1:0", "--data", "./data")
	srv.Dir, srv.Env = dir, crashEnv()
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	var hint string
	for sc := bufio.NewScanner(out); sc.Scan(); {
		if h, ok := strings.CutPrefix(sc.Text(), "create an API key:"); ok {
			hint = strings.TrimSpace(h)
			break
		}
	}
	if !strings.HasPrefix(hint, "./fleethub keys create --data ./data ") {
		t.Fatalf("hint %q, want the binary as it was invoked", hint)
	}
	sh := exec.Command("sh", "-c", hint)
	sh.Dir, sh.Env = dir, crashEnv()
	key, err := sh.Output()
	if err != nil || !strings.HasPrefix(string(key), "fhk_test_") {
		t.Fatalf("pasted hint: %v %q", err, key)
	}
}
