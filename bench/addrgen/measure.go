package main

import (
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/internal/geocode"
	"github.com/fleethub/fleethub/internal/geocode/heldout"
)

// measure opens the index of -addresses with its saved copy under -data
// and reports what it cost, then runs the held-out queries made from
// -rows (the real files; "queens" in a name marks the borough's rows).
func measure(args []string) {
	fs := flag.NewFlagSet("measure", flag.ExitOnError)
	addrs := fs.String("addresses", "", "comma list of address files to index")
	data := fs.String("data", "", "data directory for the saved index (empty: none)")
	rowFiles := fs.String("rows", "", "comma list of real CSV files to make queries from")
	n := fs.Int("n", 200, "queries per class")
	dur := fs.Duration("throughput", 5*time.Second, "how long two callers search")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the queries to this file")
	server := fs.String("url", "", "measure a running server at this address instead (with -key; -addresses and -data unused)")
	key := fs.String("key", "", "API keys with geocoding:read, comma-separated, used in turn, for -url (search allows 1,000 a minute per key)")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	if *server != "" {
		measureHTTP(*server, *key, heldout.Cases(readAll(*rowFiles), *n), *dur)
		return
	}
	start := time.Now()
	ix, err := geocode.Open(geocode.Config{Files: strings.Split(*addrs, ","), Dir: *data,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		log.Fatal(err)
	}
	took := time.Since(start)
	runtime.GC()
	debug.FreeOSMemory()
	fmt.Printf("index: %d addresses, opened in %.2f s; RSS %s, peak RSS %s\n", ix.Len(), took.Seconds(), procStatus("VmRSS"), procStatus("VmHWM"))

	rows := readAll(*rowFiles)
	cases := heldout.Cases(rows, *n)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	heldout.Evaluate(ix, cases[:min(len(cases), 200)]) // warm up
	classes := heldout.Evaluate(ix, cases)
	fmt.Printf("%-30s %5s %7s %7s %9s %9s\n", "class", "n", "top-1", "top-5", "p50", "p99")
	var search, auto, valid heldout.Class
	for _, c := range classes {
		fmt.Printf("%-30s %5d %6.1f%% %6.1f%% %9s %9s\n", c.Name, c.N, 100*c.Share(false), 100*c.Share(true), c.Quantile(0.5).Round(time.Microsecond), c.Quantile(0.99).Round(time.Microsecond))
		switch {
		case strings.HasPrefix(c.Name, "prefix"):
			auto.Latencies = append(auto.Latencies, c.Latencies...)
		case strings.HasPrefix(c.Name, "validate"):
			valid.Latencies = append(valid.Latencies, c.Latencies...)
		default:
			search.Latencies = append(search.Latencies, c.Latencies...)
		}
	}
	bound := heldout.Bound(rows, cases)
	for _, c := range classes {
		if b, ok := bound[c.Name]; ok {
			fmt.Printf("%-30s best any ranking can expect: top-1 %.1f%%, top-5 %.1f%%\n", c.Name, 100*b[0], 100*b[1])
		}
	}
	for _, c := range []struct {
		name string
		c    *heldout.Class
	}{{"search", &search}, {"autocomplete", &auto}, {"validate", &valid}} {
		fmt.Printf("%-13s one caller: p50 %s, p99 %s over %d queries\n", c.name, c.c.Quantile(0.5).Round(time.Microsecond), c.c.Quantile(0.99).Round(time.Microsecond), len(c.c.Latencies))
	}

	var qs []string
	for _, c := range cases {
		if !c.Prefix && c.Validate == 0 {
			qs = append(qs, c.Q)
		}
	}
	var done atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(*dur)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; time.Now().Before(stop); i += 2 {
				ix.Search(qs[i%len(qs)], 10)
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	fmt.Printf("search, two callers: %.0f per second\n", float64(done.Load())/dur.Seconds())
}

// procStatus is a field of /proc/self/status (Linux), or "?".
func procStatus(field string) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// readAll reads the rows of a comma list of real CSV files ("queens" in a
// name marks the borough's rows).
func readAll(files string) []heldout.Row {
	var rows []heldout.Row
	for _, p := range strings.Split(files, ",") {
		r, err := heldout.ReadRows(p, strings.Contains(strings.ToLower(p), "queens"))
		if err != nil {
			log.Fatal(err)
		}
		rows = append(rows, r...)
	}
	return rows
}
