package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Report is a result as named rows in order: a table for people
// (WriteTable) and one JSON object for CI (WriteJSON).
type Report struct {
	Mode string
	Rows []Row
}

// Row is one figure of a report. Value is an integer, a float64, a
// time.Duration (milliseconds in JSON, whose key says _ms), a bool, a
// string or Counts; floats and durations go to JSON to three decimals.
type Row struct {
	Key   string // JSON name
	Label string // table label
	Value any
	Unit  string // after the value in the table
}

// Count is one entry of a tally, e.g. a status and how often it came.
type Count struct {
	Name string
	N    int64
}

// Counts is a tally in its order: "202: 2,014  500: 3" in a table, an
// object in JSON.
type Counts []Count

// StatusCounts is a tally of statuses, in status order.
func StatusCounts(m map[int]int64) Counts {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	c := make(Counts, len(keys))
	for i, k := range keys {
		c[i] = Count{Name: strconv.Itoa(k), N: m[k]}
	}
	return c
}

// NamedCounts is a tally by name, in name order.
func NamedCounts(m map[string]int64) Counts {
	c := make(Counts, 0, len(m))
	for k, n := range m {
		c = append(c, Count{Name: k, N: n})
	}
	slices.SortFunc(c, func(a, b Count) int { return strings.Compare(a.Name, b.Name) })
	return c
}

// Add appends a row.
func (r *Report) Add(key, label string, value any, unit string) {
	r.Rows = append(r.Rows, Row{Key: key, Label: label, Value: value, Unit: unit})
}

// WriteTable writes the report as two aligned columns under its mode.
func (r *Report) WriteTable(w io.Writer) {
	width := 0
	for _, row := range r.Rows {
		width = max(width, len(row.Label))
	}
	fmt.Fprintln(w, r.Mode)
	for _, row := range r.Rows {
		v := formatValue(row.Value)
		if row.Unit != "" {
			v += " " + row.Unit
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, row.Label, v)
	}
}

// WriteJSON writes the report as one JSON object: "mode" and a member per
// row.
func (r *Report) WriteJSON(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`{"mode":`)
	writeJSONValue(&b, r.Mode)
	for _, row := range r.Rows {
		b.WriteByte(',')
		writeJSONValue(&b, row.Key)
		b.WriteByte(':')
		writeJSONValue(&b, jsonValue(row.Value))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeJSONValue(b *strings.Builder, v any) {
	enc, err := json.Marshal(v)
	if err != nil {
		enc = []byte("null")
	}
	b.Write(enc)
}

// jsonValue is a row's value as JSON carries it.
func jsonValue(v any) any {
	switch x := v.(type) {
	case time.Duration:
		return math.Round(float64(x)/1e3) / 1e3 // milliseconds, to the microsecond
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return math.Round(x*1e3) / 1e3
	case Counts:
		m := make(map[string]int64, len(x))
		for _, c := range x {
			m[c.Name] = c.N
		}
		return m
	}
	return v
}

// formatValue writes a value for people: integers with thousands
// separators, floats to a sensible precision, durations to three
// figures.
func formatValue(v any) string {
	switch x := v.(type) {
	case int:
		return Thousands(int64(x))
	case int64:
		return Thousands(x)
	case float64:
		return formatFloat(x)
	case time.Duration:
		return FormatDuration(x)
	case Counts:
		if len(x) == 0 {
			return "none"
		}
		parts := make([]string, len(x))
		for i, c := range x {
			parts[i] = c.Name + ": " + Thousands(c.N)
		}
		return strings.Join(parts, "  ")
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// Thousands writes n with a comma every three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func formatFloat(f float64) string {
	switch a := math.Abs(f); {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "n/a"
	case a >= 1000:
		return Thousands(int64(math.Round(f)))
	case a >= 100:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// FormatDuration writes d to three significant figures (1.23ms, 45.6µs,
// 2.01s).
func FormatDuration(d time.Duration) string {
	switch a := d.Abs(); {
	case a == 0:
		return "0"
	case a >= time.Second:
		return formatFloat(d.Seconds()) + "s"
	case a >= time.Millisecond:
		return formatFloat(float64(d)/1e6) + "ms"
	case a >= time.Microsecond:
		return formatFloat(float64(d)/1e3) + "µs"
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// latencyRows adds the quantiles of sorted latencies under prefix
// (e.g. "latency" gives latency_p50_ms, …).
func (r *Report) latencyRows(prefix, label string, sorted []time.Duration) {
	q := func(f float64) time.Duration { return quantile(sorted, f) }
	for _, p := range []struct {
		key string
		f   float64
	}{{"p50", .5}, {"p90", .9}, {"p99", .99}, {"p99.9", .999}, {"max", 1}} {
		r.Add(prefix+"_"+strings.ReplaceAll(p.key, ".", "_")+"_ms", label+" "+p.key, q(p.f), "")
	}
}
