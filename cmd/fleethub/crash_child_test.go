package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// crashBuild compiles the server into dir, without -race (the child must
// stay fast when the tests themselves run with -race).
func crashBuild(t *testing.T, dir string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin := filepath.Join(dir, "fleethub")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of the server: %v\n%s", err, out)
	}
	return bin
}

// crashEnv is the environment of the child: ours without any FLEETHUB_
// variable, so a developer's settings never switch the store or the bus
// behind the harness's back.
func crashEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLEETHUB_") {
			env = append(env, kv)
		}
	}
	return env
}

// crashFreeAddr finds a loopback port that is free now; the child binds it
// on every restart.
func crashFreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// crashKey creates an API key of crash-org offline.
func crashKey(t *testing.T, bin string, storeArgs []string) string {
	t.Helper()
	return crashKeyFor(t, bin, storeArgs, "crash-org", "test")
}

// crashKeyFor creates an API key of org and env offline with `fleethub
// keys create`, which prints it on its first line.
func crashKeyFor(t *testing.T, bin string, storeArgs []string, org, env string) string {
	t.Helper()
	args := append([]string{"keys", "create"}, storeArgs...)
	args = append(args, "--org", org, "--env", env, "--name", "crash", "--permissions", "all", "--rpm", "10000000")
	cmd := exec.Command(bin, args...)
	cmd.Env = crashEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fleethub keys create: %v\n%s", err, stderr.Bytes())
	}
	key, _, _ := strings.Cut(string(out), "\n")
	if key = strings.TrimSpace(key); key == "" {
		t.Fatalf("fleethub keys create printed no key: %q", out)
	}
	return key
}

// crashChild is the server running as a child process.
type crashChild struct {
	t       *testing.T
	bin     string
	args    []string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	starts  int
}

// start runs the child; its output goes to the log file, appended across
// restarts.
func (c *crashChild) start() {
	c.t.Helper()
	f, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	c.starts++
	fmt.Fprintf(f, "==== harness: start %d ====\n", c.starts)
	cmd := exec.Command(c.bin, c.args...)
	cmd.Env = crashEnv()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("start the server: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	c.cmd, c.exited = cmd, exited
}

// running tells whether the child started last is still alive.
func (c *crashChild) running() bool {
	if c.cmd == nil {
		return false
	}
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *crashChild) kill() {
	if c.cmd == nil {
		return
	}
	c.cmd.Process.Kill()
	<-c.exited
	c.cmd = nil
}

// waitReady polls GET /readyz until it answers 200; a child that exits
// meanwhile, or the deadline, fails the test.
func (c *crashChild) waitReady(base string, within time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	hc := &http.Client{Timeout: time.Second}
	for {
		res, err := hc.Get(base + "/readyz")
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if !c.running() {
			c.t.Fatalf("the server exited before it was ready (start %d)\n%s", c.starts, c.tail(40))
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("/readyz did not answer 200 within %v (start %d; last error %v)\n%s", within, c.starts, err, c.tail(40))
		}
		select {
		case <-c.exited:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// crashPause waits d (nothing when d ≤ 0): the interval of a poll that
// has a deadline, or the pacing of a request loop; never a wait for a
// condition.
func crashPause(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	<-t.C
}

// tail is the end of the child's log, for failure messages.
func (c *crashChild) tail(lines int) string {
	f, err := os.Open(c.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	var ring []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		ring = append(ring, sc.Text())
		if len(ring) > lines {
			ring = ring[1:]
		}
	}
	return fmt.Sprintf("server log, last %d lines:\n%s", len(ring), strings.Join(ring, "\n"))
}

// skipUnderRace skips a test under the race detector: it drives a server
// child built without the detector, or contracts a whole city, and
// `make test` runs it in its pass without the detector, where the child's
// build reuses the packages the test binary compiled.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceOn {
		t.Skip("runs in make test's pass without the race detector (see the Makefile)")
	}
}
