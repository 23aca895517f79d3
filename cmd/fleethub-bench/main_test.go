package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/bench"
)

func TestRunArguments(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"none", nil, 2, "", "usage: fleethub-bench"},
		{"help", []string{"help"}, 0, "usage: fleethub-bench", ""},
		{"unknown generator", []string{"nope"}, 2, "", `unknown generator "nope"`},
		{"unknown flag", []string{"ingest", "--nope"}, 2, "", "flag provided but not defined"},
		{"another mode's flag", []string{"health", "--subscribers", "5"}, 2, "", "flag provided but not defined: -subscribers"},
		{"mode help", []string{"sse", "-h"}, 0, "", "flags of sse:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tc.args, &stdout, &stderr); code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Fatalf("stdout %q, stderr %q; want %q and %q", stdout.String(), stderr.String(), tc.stdout, tc.stderr)
			}
		})
	}
}

// Each mode's -h lists its own flags and none of another mode's.
func TestModeHelpListsOnlyItsFlags(t *testing.T) {
	for _, tc := range []struct {
		mode       string
		has, lacks []string
	}{
		{"fanout", []string{"-subscribers", "-events-per-sec", "-tls", "-insecure", "-pid", "-json", "-subscribe-url"}, []string{"-trips", "-vrp", "-clients", "-redis-url", "-dead-neighbour", "-rate"}},
		{"sse", []string{"-clients", "-events-per-sec", "-tls", "-insecure", "-pid", "-json"}, []string{"-subscribers", "-subscribe-url", "-batch-events", "-trips", "-streams"}},
		{"health", []string{"-conns", "-rate", "-url", "-insecure"}, []string{"-subscribers", "-batch", "-vrp", "-tls"}},
		{"ingest", []string{"-trips", "-kind", "-batch"}, []string{"-insecure", "-subscribers", "-fleethub"}},
		{"soak", []string{"-fleethub", "-redis-url", "-points-rate", "-rate", "-dir"}, []string{"-url", "-key", "-subscribers", "-pid"}},
		{"broker", []string{"-port", "-dir"}, []string{"-url", "-json", "-duration"}},
		{"optimize", []string{"-vrp", "-instances", "-time-limit"}, []string{"-subscribers", "-kind"}},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{tc.mode, "-h"}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s -h: exit %d", tc.mode, code)
		}
		help := stderr.String()
		for _, f := range tc.has {
			if !strings.Contains(help, "  "+f+" ") && !strings.Contains(help, "  "+f+"\n") {
				t.Errorf("%s -h lacks %s:\n%s", tc.mode, f, help)
			}
		}
		for _, f := range tc.lacks {
			if strings.Contains(help, "  "+f+" ") || strings.Contains(help, "  "+f+"\n") {
				t.Errorf("%s -h lists %s, another mode's", tc.mode, f)
			}
		}
	}
}

// A mode's defaults are its own; --tls turns the addresses to https.
func TestModeDefaults(t *testing.T) {
	for mode, batch := range map[string]int{"ingest": 1000, "fanout": 50, "sse": 50, "webhook": 100, "events": 500} {
		f, err := parseFlags(mode, nil, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if f.batch != batch {
			t.Errorf("%s: --batch defaults to %d, want %d", mode, f.batch, batch)
		}
	}
	f, err := parseFlags("events", nil, &bytes.Buffer{})
	if err != nil || f.c.Conns != 8 {
		t.Fatalf("events: --conns %d (%v), want 8", f.c.Conns, err)
	}
	f, err = parseFlags("fanout", []string{"--tls", "--url", "http://127.0.0.1:1", "--subscribe-url", "http://127.0.0.1:2", "--pid", "7", "--insecure"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if f.c.URL != "https://127.0.0.1:1" || f.subURL != "https://127.0.0.1:2" || f.pid != 7 || !f.insecure {
		t.Fatalf("fanout --tls: url %q, subscribe-url %q, pid %d, insecure %v", f.c.URL, f.subURL, f.pid, f.insecure)
	}
}

// A result prints as a table, statuses as "202: 2,014", or as one JSON
// object.
func TestResultTableAndJSON(t *testing.T) {
	res := &bench.Result{Name: "ingest", Requests: 2017, Errors: 3, Statuses: map[int]int64{500: 3, 202: 2014}, Elapsed: 2 * time.Second,
		Items: 2_014_000, Latencies: []time.Duration{time.Millisecond, 2 * time.Millisecond, 40 * time.Millisecond}, FirstError: "status 500: boom"}
	var table bytes.Buffer
	if err := writeResult(&table, "ingest", res, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"202: 2,014  500: 3", "2,014,000", "1,007,000 items/s", "latency p99", "40.0ms", "status 500: boom"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if strings.Contains(table.String(), "map[") {
		t.Errorf("table prints a Go map:\n%s", table.String())
	}
	var out bytes.Buffer
	if err := writeResult(&out, "ingest", res, true); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if got["mode"] != "ingest" || got["requests"] != 2017.0 || got["latency_p99_ms"] != 40.0 || got["errors"] != 3.0 {
		t.Fatalf("JSON %s", out.String())
	}
	if st, ok := got["statuses"].(map[string]any); !ok || st["202"] != 2014.0 || st["500"] != 3.0 {
		t.Fatalf("statuses in JSON: %v", got["statuses"])
	}
	// a result without a report still gives JSON, its fields
	out.Reset()
	iso := &bench.IsolationResult{Duplicates: 4, Phases: []bench.IsolationPhase{{Delivered: 7, Latencies: make([]time.Duration, 1000)}}}
	if err := writeResult(&out, "webhook", iso, true); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got["mode"] != "webhook" || got["result"].(map[string]any)["Duplicates"] != 4.0 ||
		strings.Contains(out.String(), "Latencies") {
		t.Fatalf("isolation as JSON: %v %s", err, out.String())
	}
}

// The progress line says the interval's rate, p99 and errors.
func TestProgressLine(t *testing.T) {
	m := &bench.Meter{}
	prev := m.Snapshot()
	for range 99 {
		m.Observe(time.Millisecond)
	}
	m.Observe(time.Second)
	m.Fail()
	line := progressLine(3*time.Second, 0.5, m.Snapshot().Since(prev), true)
	for _, want := range []string{"3s", "200/s", "p99 1.", "errors 1"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
	if line := progressLine(time.Second, 1, bench.MeterSnapshot{}, false); strings.Contains(line, "/s") {
		t.Errorf("a generator that counts nothing shows a rate: %q", line)
	}
}

// The broker prints its address list and stops with the context.
func TestRunBroker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"broker", "--port", "0"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if addr := strings.TrimSpace(stdout.String()); !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("broker printed %q, want 127.0.0.1:port", addr)
	}
}

// With --pid, a request generator's report gains the server's CPU over
// the run and its memory (here the test's own process stands for it).
func TestServerFiguresAddedWithPID(t *testing.T) {
	w := watchServer(os.Getpid())
	if !w.ok {
		t.Skip("no /proc here")
	}
	res := &bench.Result{Name: "health", Requests: 10, Statuses: map[int]int64{200: 10}, Elapsed: time.Second}
	var out bytes.Buffer
	if err := writeResult(&out, "health", w.around(res), true); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["server_cpu_source"] != fmt.Sprintf("/proc/%d", os.Getpid()) || got["server_rss_mib"].(float64) <= 0 || got["server_cpu_us_per_request"] == nil {
		t.Fatalf("server figures: %v", got)
	}
	if w := watchServer(0); w.around(res) != printer(res) {
		t.Fatal("figures added without --pid")
	}
}
