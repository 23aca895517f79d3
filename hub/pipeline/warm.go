package pipeline

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/streams"
	"github.com/fleethub/fleethub/internal/store"
)

// StreamLister lists the stored streams (the store).
type StreamLister interface {
	ListStreams(ctx context.Context, since time.Time) ([]store.Stream, error)
}

// DefaultResend is WarmConfig.Resend's default: longer than a hand-off
// to the sink can take (webhook.Dispatcher gives a group of store writes
// a minute, and an Accept may wait for the group before its own).
const DefaultResend = 2 * time.Minute

// WarmConfig is what Warm reads from, and how much.
type WarmConfig struct {
	Registry *streams.Registry // loaded: the streams' configurations
	Streams  StreamLister      // which streams exist
	Log      hub.Log           // the streams' logs
	// Sink, when set, is handed again the newest entries of webhook
	// streams with deduplication (see Warm); it must recognise an entry
	// it has accepted before (webhook.Dispatcher does: a delivery's id
	// is derived from its bytes).
	Sink Sink
	// TTL and Max are the window's: ids logged longer than TTL ago are
	// not loaded, nor more than Max ids (the newest are kept).
	TTL time.Duration
	Max int
	// Resend is how long before a webhook stream's newest entry the
	// entries handed again to Sink go back; default DefaultResend.
	Resend time.Duration
	Logger *slog.Logger     // default slog.Default()
	Now    func() time.Time // default time.Now
}

// Warm rebuilds the window of the event ids each deduplicating stream's
// log holds (Pipeline.KeepStreamIDs) from the stream logs before the
// pipeline consumes: every event of a stream with deduplication that was
// appended within cfg.TTL (at most cfg.Max of them, the newest) is
// recorded under its StreamKey. Without it a window kept in memory starts
// empty after a restart, and the bus's redelivery of what was appended
// but not yet committed (or a device's retry) would be appended to the
// stream again. The ids are the stream's own, not the organization's: an
// event one deduplicating stream took before the crash while it waited
// in another's reorder buffer still reaches the other one when the bus
// hands it again.
//
// Ids are recorded oldest first across streams, each at its entry's time
// when w is a dedup.Recorder (so that it expires when it would have, had
// the node not restarted; otherwise with Done, its TTL counted from now).
//
// The pipeline appends a webhook stream's entries to its log, then hands
// them to the sink; an entry appended just before a crash may not have
// reached the sink, and once its id is recorded its redelivery is
// suppressed. So, before recording them, Warm hands the entries of each
// webhook stream with deduplication appended within cfg.Resend of its
// newest entry to cfg.Sink again: the sink stores the ones it lacks and
// ignores the others. Ids whose hand-off fails are not recorded.
//
// A stream whose log cannot be read is skipped and logged; Warm fails
// only when the streams cannot be listed or ctx ends. It returns the
// number of ids recorded (an event logged by several deduplicating
// streams counts once for each).
//
// A window shared through Redis needs none of this: Redis keeps it across
// a node's restart (and its own persistence is the deployment's concern,
// docs/operations.md), so cmd/fleethub warms only its embedded window.
func Warm(ctx context.Context, w dedup.Window, cfg WarmConfig) (int, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Resend <= 0 {
		cfg.Resend = DefaultResend
	}
	began := time.Now()
	wm := warmer{cfg: cfg, log: cfg.Log}
	recs, err := cfg.Streams.ListStreams(ctx, time.Time{})
	if err != nil {
		return 0, fmt.Errorf("warm dedup window: list streams: %w", err)
	}
	now := cfg.Now()
	since := now.Add(-cfg.TTL)
	var ss []*warmStream
	for _, rec := range recs {
		e := cfg.Registry.ByID(rec.ID)
		if e == nil || e.Rec.Kind != hub.KindEvents || !wantsDedup([]*streams.Entry{e}) {
			continue
		}
		s, err := wm.plan(ctx, e, since)
		if err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			cfg.Logger.Error("dedup window: stream log unreadable; its events are not deduplicated across this restart", "stream_id", e.Rec.ID, "error", err)
			continue
		}
		if s != nil {
			ss = append(ss, s)
		}
	}
	if err := wm.limit(ctx, ss, since, now); err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		cfg.Logger.Warn("dedup window: finding the newest ids that fit failed; loading every id within the TTL", "error", err)
	}
	resent := 0
	if cfg.Sink != nil {
		for _, s := range ss {
			if s.e.Info.Delivery == "webhook" && s.e.Rec.State != hub.StateStopped {
				n, err := wm.resend(ctx, s)
				if err != nil && ctx.Err() != nil {
					return 0, ctx.Err()
				}
				resent += n
			}
		}
	}
	n, read, err := wm.record(ctx, w, ss)
	if err != nil {
		return n, err
	}
	cfg.Logger.Info("dedup window warmed from the stream logs", "streams", len(ss), "entries_read", read, "ids", n,
		"webhook_entries_handed_again", resent, "took", time.Since(began).Round(time.Millisecond))
	return n, nil
}

type warmer struct {
	cfg  WarmConfig
	log  hub.Log
	page int // entries a cursor reads at once
}

// warmStream is one stream to load: offsets start..end.
type warmStream struct {
	e          *streams.Entry
	prefix     string // StreamKey's stream part
	start, end int64
	last       int64
}

// warmPage is how many entries a stream's cursor reads at once, and
// warmBuffered how many ids the cursors of all streams hold at most
// (fewer a page when many streams deduplicate).
const (
	warmPage     = 1024
	warmBuffered = 1 << 18
)

// plan finds the offsets of a stream's entries to load: those appended
// at or after since, at most Max; nil when there are none.
func (wm *warmer) plan(ctx context.Context, e *streams.Entry, since time.Time) (*warmStream, error) {
	last, err := wm.log.Last(ctx, e.Rec.ID)
	if err != nil || last == 0 {
		return nil, err
	}
	first, err := wm.log.Read(ctx, e.Rec.ID, 1, 1)
	if err != nil || len(first) == 0 {
		return nil, err
	}
	lo := first[0].Offset
	if wm.cfg.Max > 0 {
		lo = max(lo, last-int64(wm.cfg.Max)+1)
	}
	start, err := wm.firstAt(ctx, e.Rec.ID, lo, last, since)
	if err != nil || start > last {
		return nil, err
	}
	return &warmStream{e: e, prefix: StreamKey(e.Rec.ID, ""), start: start, end: last, last: last}, nil
}

// firstAt returns the first offset in lo..hi of an entry appended at or
// after t (hi+1 when none is), by bisection: entries are appended in
// time order.
func (wm *warmer) firstAt(ctx context.Context, id string, lo, hi int64, t time.Time) (int64, error) {
	for lo <= hi {
		mid := lo + (hi-lo)/2
		es, err := wm.log.Read(ctx, id, mid, 1)
		if err != nil {
			return 0, err
		}
		if len(es) == 0 || !es[0].Time.Before(t) {
			hi = mid - 1
		} else {
			lo = es[0].Offset + 1
		}
	}
	return lo, nil
}

// limit moves the streams' starts on so that at most Max entries are
// loaded in all: those appended at or after the earliest time (to the
// millisecond) that leaves no more.
func (wm *warmer) limit(ctx context.Context, ss []*warmStream, since, now time.Time) error {
	if wm.cfg.Max <= 0 {
		return nil
	}
	total := int64(0)
	for _, s := range ss {
		total += s.end - s.start + 1
	}
	if total <= int64(wm.cfg.Max) {
		return nil
	}
	count := func(t time.Time) (int64, error) {
		var n int64
		for _, s := range ss {
			off, err := wm.firstAt(ctx, s.e.Rec.ID, s.start, s.end, t)
			if err != nil {
				return 0, err
			}
			n += s.end - off + 1
		}
		return n, nil
	}
	lo, hi := since.UnixMilli(), now.UnixMilli()+1 // count(hi) is 0
	for lo < hi {
		mid := lo + (hi-lo)/2
		n, err := count(time.UnixMilli(mid))
		if err != nil {
			return wm.failed(ctx, err)
		}
		if n <= int64(wm.cfg.Max) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	for _, s := range ss {
		off, err := wm.firstAt(ctx, s.e.Rec.ID, s.start, s.end, time.UnixMilli(lo))
		if err != nil {
			return wm.failed(ctx, err)
		}
		s.start = off
	}
	return nil
}

// failed returns ctx's error when it ended, or err.
func (wm *warmer) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("warm dedup window: %w", err)
}

// resend hands a webhook stream's newest entries to the sink again; on
// failure it ends the stream's range before them, so that their ids are
// not recorded and their redelivery is appended and handed off anew.
func (wm *warmer) resend(ctx context.Context, s *warmStream) (int, error) {
	id := s.e.Rec.ID
	newest, err := wm.log.Read(ctx, id, s.last, 1)
	if err == nil && len(newest) == 0 {
		return 0, nil
	}
	from := s.start
	if err == nil {
		from, err = wm.firstAt(ctx, id, s.start, s.last, newest[0].Time.Add(-wm.cfg.Resend))
	}
	n := 0
	for next := from; err == nil && next <= s.last; {
		var es []hub.Entry
		if es, err = wm.log.Read(ctx, id, next, int(min(s.last-next+1, warmPage))); err != nil || len(es) == 0 {
			break
		}
		if err = wm.cfg.Sink.Accept(ctx, s.e.Info, es); err == nil {
			n += len(es)
			next = es[len(es)-1].Offset + 1
		}
	}
	if err != nil {
		s.end = from - 1
		wm.cfg.Logger.Warn("dedup window: handing a webhook stream's newest entries to the sink again failed; their events are not deduplicated across this restart",
			"stream_id", id, "from_offset", from, "error", err)
	}
	return n, err
}

// record reads the planned entries of every stream, merged oldest first,
// and records their ids in w. It returns the ids recorded and the
// entries read.
func (wm *warmer) record(ctx context.Context, w dedup.Window, ss []*warmStream) (n, read int, err error) {
	rec, _ := w.(dedup.Recorder)
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := w.Done(ctx, batch...)
		batch = batch[:0]
		return err
	}
	wm.page = max(16, min(warmPage, warmBuffered/max(1, len(ss))))
	var h warmHeap
	for _, s := range ss {
		c := &warmCursor{s: s, next: s.start}
		if err := wm.fill(ctx, c, &read); err != nil {
			return n, read, err
		}
		if len(c.buf) > 0 {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		c := h[0]
		it := c.buf[c.i]
		c.i++
		key := c.s.prefix + it.id
		if rec != nil {
			err = rec.RecordAt(ctx, it.t, key)
		} else if batch = append(batch, key); len(batch) == 1024 {
			err = flush()
		}
		if err != nil {
			return n, read, wm.failed(ctx, err)
		}
		n++
		if c.i == len(c.buf) {
			if err := wm.fill(ctx, c, &read); err != nil {
				return n, read, err
			}
		}
		if c.i == len(c.buf) {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	if err := flush(); err != nil {
		return n, read, wm.failed(ctx, err)
	}
	return n, read, nil
}

// fill reads a cursor's next page of ids; a stream whose log fails is
// logged and left.
func (wm *warmer) fill(ctx context.Context, c *warmCursor, read *int) error {
	c.buf, c.i = c.buf[:0], 0
	for len(c.buf) == 0 && c.next <= c.s.end {
		es, err := wm.log.Read(ctx, c.s.e.Rec.ID, c.next, int(min(c.s.end-c.next+1, int64(wm.page))))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			wm.cfg.Logger.Error("dedup window: stream log unreadable; its newer events are not deduplicated across this restart",
				"stream_id", c.s.e.Rec.ID, "offset", c.next, "error", err)
			c.next = c.s.end + 1
			return nil
		}
		if len(es) == 0 {
			c.next = c.s.end + 1
			break
		}
		for _, e := range es {
			if e.Offset > c.s.end {
				break
			}
			*read++
			data := e.Data
			if sl := c.s.e.Sealer; sl != nil {
				if data, err = sl.Open(e.Data); err != nil {
					continue
				}
			}
			if id := loggedEventID(data); id != "" {
				c.buf = append(c.buf, warmItem{id: id, t: e.Time})
			}
		}
		c.next = es[len(es)-1].Offset + 1
	}
	return nil
}

// loggedEventID is the event_id of a logged event: the pipeline writes
// it first, so it is usually read without decoding the rest.
func loggedEventID(data []byte) string {
	const prefix = `{"event_id":"`
	if rest, ok := bytes.CutPrefix(data, []byte(prefix)); ok {
		if i := bytes.IndexByte(rest, '"'); i >= 0 && bytes.IndexByte(rest[:i], '\\') < 0 {
			return string(rest[:i])
		}
	}
	var v struct {
		EventID string `json:"event_id"`
	}
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	return v.EventID
}

type warmItem struct {
	id string
	t  time.Time
}

// warmCursor reads one stream's planned entries a page at a time.
type warmCursor struct {
	s    *warmStream
	next int64      // the next offset to read
	buf  []warmItem // read, from buf[i] on not recorded yet
	i    int
}

// warmHeap orders cursors by the time of their next id.
type warmHeap []*warmCursor

func (h warmHeap) Len() int           { return len(h) }
func (h warmHeap) Less(i, j int) bool { return h[i].buf[h[i].i].t.Before(h[j].buf[h[j].i].t) }
func (h warmHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *warmHeap) Push(x any)        { *h = append(*h, x.(*warmCursor)) }
func (h *warmHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
