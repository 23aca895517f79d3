package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fleethub/fleethub/bench"
)

// progressEvery is how often the progress line is written.
const progressEvery = time.Second

// withProgress runs fn, writing a progress line to w every second until
// it returns: on a terminal one line rewritten in place, elsewhere a line
// a second.
func withProgress(ctx context.Context, w io.Writer, m *bench.Meter, pid int, fn func(context.Context) error) error {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p := newProgress(w, m, pid, isTerminal(w))
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				p.end()
				return
			case now := <-t.C:
				p.tick(now)
			}
		}
	}()
	err := fn(ctx)
	close(done)
	wg.Wait()
	return err
}

// progress writes the progress lines of one run.
type progress struct {
	w        io.Writer
	m        *bench.Meter
	pid      int
	terminal bool
	start    time.Time
	last     time.Time
	prev     bench.MeterSnapshot
	prevProc bench.Proc
	procOK   bool
	wrote    bool
}

func newProgress(w io.Writer, m *bench.Meter, pid int, terminal bool) *progress {
	p := &progress{w: w, m: m, pid: pid, terminal: terminal, start: time.Now()}
	p.last = p.start
	p.prev = m.Snapshot()
	if pid > 0 {
		p.prevProc, p.procOK = readProc(pid)
	}
	return p
}

func readProc(pid int) (bench.Proc, bool) {
	pr, err := bench.ReadProc(pid)
	return pr, err == nil
}

// tick writes the line of the interval that ended at now.
func (p *progress) tick(now time.Time) {
	secs := now.Sub(p.last).Seconds()
	snap := p.m.Snapshot()
	d := snap.Since(p.prev)
	line := progressLine(now.Sub(p.start), secs, d, snap.Ops > 0 || snap.Errors > 0)
	if p.pid > 0 {
		pr, ok := readProc(p.pid)
		switch {
		case ok && p.procOK:
			line += fmt.Sprintf("  server CPU %.0f%%  RSS %.0f MiB", 100*(pr.CPU-p.prevProc.CPU).Seconds()/secs, float64(pr.RSS)/(1<<20))
		case !ok:
			line += fmt.Sprintf("  server %d: not readable", p.pid)
		}
		p.prevProc, p.procOK = pr, ok
	}
	p.prev, p.last = snap, now
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K"+line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.wrote = true
}

// end closes a line rewritten in place.
func (p *progress) end() {
	if p.terminal && p.wrote {
		fmt.Fprintln(p.w)
	}
}

// progressLine is one interval's figures: elapsed, then, once the
// generator counted anything, the rate, p99 and errors of the interval.
func progressLine(elapsed time.Duration, secs float64, d bench.MeterSnapshot, counting bool) string {
	line := fmt.Sprintf("%5s", elapsed.Round(time.Second))
	if counting {
		line += fmt.Sprintf("  %s/s  p99 %s  errors %s", bench.Thousands(int64(float64(d.Ops)/secs+0.5)),
			bench.FormatDuration(d.Quantile(.99)), bench.Thousands(d.Errors))
	}
	return line
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// reporter is a result with a report (a table, or JSON).
type reporter interface{ Report() *bench.Report }

// writeResult writes a generator's result: its report as a table or as
// JSON; a result without a report as its own text, or its fields as JSON.
func writeResult(w io.Writer, mode string, res printer, asJSON bool) error {
	if r, ok := res.(reporter); ok {
		rep := r.Report()
		if asJSON {
			return rep.WriteJSON(w)
		}
		rep.WriteTable(w)
		return nil
	}
	if !asJSON {
		res.Print(w)
		return nil
	}
	b, err := json.Marshal(map[string]any{"mode": mode, "result": res})
	if err != nil {
		return fmt.Errorf("result as JSON: %w", err)
	}
	_, err = io.WriteString(w, strings.TrimSpace(string(b))+"\n")
	return err
}

// serverWatch is the server's /proc figures at the start of a run, for
// the results that do not read them themselves.
type serverWatch struct {
	pid   int
	start bench.Proc
	at    time.Time
	ok    bool
}

func watchServer(pid int) *serverWatch {
	w := &serverWatch{pid: pid, at: time.Now()}
	if pid > 0 {
		w.start, w.ok = readProc(pid)
	}
	return w
}

// withServer is a result with the server's CPU over the run and its
// memory at the end added to its report.
type withServer struct {
	printer
	rep *bench.Report
}

func (w withServer) Report() *bench.Report { return w.rep }

// around adds the server's figures to a request generator's report
// (fanout, sse and idle read them themselves).
func (w *serverWatch) around(res printer) printer {
	r, ok := res.(*bench.Result)
	if !ok || !w.ok {
		return res
	}
	end, ok := readProc(w.pid)
	if !ok {
		return res
	}
	rep := r.Report()
	cpu, secs := (end.CPU - w.start.CPU).Seconds(), time.Since(w.at).Seconds()
	rep.Add("server_cpu_source", "server figures from", fmt.Sprintf("/proc/%d", w.pid), "")
	rep.Add("server_cpu_s", "server CPU", cpu, "s")
	rep.Add("server_cpu_pct", "server CPU share of one core", 100*cpu/secs, "%")
	rep.Add("server_rss_mib", "server RSS", float64(end.RSS)/(1<<20), "MiB")
	if r.Requests > 0 {
		rep.Add("server_cpu_us_per_request", "server CPU per request", cpu*1e6/float64(r.Requests), "µs")
	}
	return withServer{printer: res, rep: rep}
}
