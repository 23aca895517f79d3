package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// withHost returns rawURL with its host replaced.
func withHost(rawURL, host string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("bench: soak: %q is not a URL with a host", rawURL)
	}
	u.Host = host
	return u.String(), nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// soakProc is a child process with its output in a file.
type soakProc struct {
	name string
	args []string
	out  string
	cmd  *exec.Cmd
}

func (p *soakProc) start() error {
	f, err := os.OpenFile(p.out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	p.cmd = exec.Command(p.args[0], p.args[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("bench: soak: start %s: %w", p.name, err)
	}
	// how the process ended goes at the end of its output
	go func() {
		err := p.cmd.Wait()
		fmt.Fprintf(f, "soak: %s exited: %v\n", p.name, err)
		f.Close()
	}()
	return nil
}

// signal sends sig to the process unless it has ended.
func (p *soakProc) signal(sig syscall.Signal) error {
	if p.cmd == nil || p.cmd.Process == nil {
		return nil
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("bench: soak: signal %s: %w", p.name, err)
	}
	return nil
}

// waitReady polls base/readyz until it answers 200.
func waitReady(ctx context.Context, base string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, "GET", base+"/readyz", nil)
		if err != nil {
			return fmt.Errorf("bench: soak: %w", err)
		}
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: soak: %s not ready within %s", base, within)
}
