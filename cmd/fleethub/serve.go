package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, cfg := serveFlags(stderr)
	if err := parseFlags(fs, args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		fmt.Fprintln(stderr, "fleethub serve:", err)
		return 2
	}
	log, err := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		fmt.Fprintln(stderr, "fleethub serve:", err)
		return 2
	}
	a, err := newApp(ctx, cfg, log)
	if err != nil {
		fmt.Fprintln(stderr, "fleethub serve:", err)
		return 1
	}
	var debug net.Listener
	if cfg.DebugAddr != "" {
		// bound before the node serves: an address it cannot take is a
		// startup error, not a profile server missing later
		if debug, err = net.Listen("tcp", cfg.DebugAddr); err != nil {
			a.closeAll()
			fmt.Fprintln(stderr, "fleethub serve: --debug-addr:", err)
			return 1
		}
		defer debug.Close()
	}
	if err := a.start(ctx); err != nil {
		a.closeAll()
		fmt.Fprintln(stderr, "fleethub serve:", err)
		return 1
	}
	if debug != nil {
		go servePprof(debug, log)
	}
	where := cfg.Data
	if cfg.DatabaseURL != "" {
		where = "PostgreSQL"
	}
	log.Info("fleethub listening", "addr", a.addr.String(), "version", version, "store", where)
	scheme := "http"
	if cfg.TLSCert != "" {
		scheme = "https"
	}
	fmt.Fprintf(stdout, "fleethub %s listening on %s://%s\n", version, scheme, a.addr)
	if pa := a.server.PlainAddr(); pa != nil {
		fmt.Fprintf(stdout, "plain HTTP on http://%s\n", pa)
	}
	if cfg.DatabaseURL == "" {
		exe, err := os.Executable()
		if err != nil {
			exe = os.Args[0]
		}
		fmt.Fprintf(stdout, "create an API key:  %s keys create --data %s --org my-org --env test --name dev --permissions all\n", selfCommand(os.Args[0], exe), shellQuote(cfg.Data))
	}
	select {
	case <-ctx.Done():
	case err := <-a.errs:
		log.Error("component failed", "error", err)
	}
	log.Info("shutting down")
	if err := a.stop(cfg.ShutdownGrace); err != nil {
		log.Error("shutdown", "error", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// selfCommand is the command that runs this program again from the shell
// it was started in: `go run ./cmd/fleethub` when exe is the binary `go
// run` built (in a go-build temporary directory, gone once it exits),
// else arg0, the name it was invoked by (a path, or a name on $PATH).
func selfCommand(arg0, exe string) string {
	for _, d := range strings.Split(filepath.ToSlash(filepath.Dir(exe)), "/") {
		if strings.HasPrefix(d, "go-build") {
			return "go run ./cmd/fleethub"
		}
	}
	return shellQuote(arg0)
}

func shellQuote(s string) string {
	if strings.ContainsAny(s, " '\"$") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// servePprof serves the Go profiler on its own address, never on the API.
func servePprof(ln net.Listener, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, net.ErrClosed) {
		log.Warn("pprof server stopped", "error", err)
	}
}
