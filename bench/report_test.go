package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestReportFormats(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 10_000_000: "10,000,000"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{0: "0", 850: "850ns", 45_600: "45.6µs", 1_234_567: "1.23ms", 40 * time.Millisecond: "40.0ms",
		2_010 * time.Millisecond: "2.01s", 125 * time.Millisecond: "125ms"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
	rep := &Report{Mode: "x"}
	rep.Add("skipped", "skipped", NamedCounts(map[string]int64{"zeta": 1, "duplicate_timestamp": 2048}), "")
	rep.Add("p99_ms", "p99", 1500*time.Microsecond, "")
	rep.Add("rate", "rate", 1234.5678, "/s")
	rep.Add("tls", "TLS", true, "")
	var table bytes.Buffer
	rep.WriteTable(&table)
	for _, want := range []string{"duplicate_timestamp: 2,048  zeta: 1", "1.50ms", "1,235 /s", "true"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var out bytes.Buffer
	if err := rep.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["mode"] != "x" || got["p99_ms"] != 1.5 || got["rate"] != 1234.568 || got["tls"] != true || got["skipped"].(map[string]any)["zeta"] != 1.0 {
		t.Fatalf("JSON: %s", out.String())
	}
}

// The events result reads as a table, drained or not.
func TestEventsReport(t *testing.T) {
	for _, r := range []*EventsResult{
		{Streams: 100, Filters: "mix", Rules: "none", Accepted: 1000, ExpectedAppends: 3000, Appends: 3000, AppendsAtSendEnd: 2400,
			SendElapsed: 2 * time.Second, Drained: 4 * time.Second, Measured: 4 * time.Second, ServerCPUSeconds: 2, RequestLatencies: []time.Duration{time.Millisecond}},
		{},
	} {
		var b bytes.Buffer
		r.Print(&b)
		if !strings.Contains(b.String(), "pipeline while sending") {
			t.Errorf("events table:\n%s", b.String())
		}
		if r.Drained > 0 && !strings.Contains(b.String(), "pipeline alone after sending") {
			t.Errorf("drained run lacks the rate after sending:\n%s", b.String())
		}
		if r.Drained == 0 && !strings.Contains(b.String(), "NOT drained") {
			t.Errorf("run not drained does not say so:\n%s", b.String())
		}
	}
}
