package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/internal/routing"
	"github.com/valyala/fasthttp"
)

// DriveConfig drives POST /v1/locations/batch from vehicles that drive
// the roads of an OpenStreetMap extract, the one the server was started
// with (--osm), so that the server's road matcher has roads to match.
type DriveConfig struct {
	Config
	OSM      string        // the .osm.pbf extract the vehicles drive on
	Vehicles int           // vehicles, each on a trip of its own (default 1,000)
	Every    time.Duration // a point taken this often by each vehicle (default 1 s)
	Upload   time.Duration // each vehicle uploads what it took this often (default Every)
	Noise    float64       // GPS error, meters on each axis (default 5)
	Seed     uint64
	// Stop stops every trip once the uploads end, so that the points
	// still in the matcher's windows are decided too and every point
	// accepted should reach a final road.
	Stop   bool
	Server ServerConfig
}

// DriveResult is a drive's uploads and what the server's road matcher
// made of them.
type DriveResult struct {
	*Result
	Vehicles int
	Conns    int           // connections uploading (at most Config.Conns, a divisor of Vehicles where one is near)
	Points   int64         // points in uploads answered 200
	Roads    *RoadFigures  // nil: the server has no road matcher
	Stopped  time.Duration // how long stopping the trips took (DriveConfig.Stop)
	// CPU seconds over the run and resident bytes at the end of the
	// server, read from CPUSource ("" when not read)
	CPU, RSS  float64
	CPUSource string
}

// RoadFigures are the server's road matcher's figures over a drive, from
// its /metrics.
type RoadFigures struct {
	Judged int64 // points whose road became final
	// Lag is acceptance to road final for the points decided in the
	// steady part of the drive: from SteadyFrom after the uploads began
	// to their end. In a steady fleet the lags of the points decided in
	// a span of time are those of the points accepted in it; the first
	// uploads (a vehicle's first points, with no window before them)
	// and the points still in the windows when the uploads end (decided
	// by the stops, or never) are not a fleet that goes on driving.
	Lag        *histogram
	SteadyFrom time.Duration
	// WholeLag is the same over the whole run, the stops' decisions
	// included: a point still in its trip's window when the uploads end
	// waits for the generator to stop its trip, after every upload.
	WholeLag *histogram
	Wait     *histogram    // acceptance to the matcher taking the points up
	Overflow int64         // points judged without a road (the matcher's queue full)
	Queued   float64       // points waiting for the matcher at the end
	Settle   time.Duration // after the last upload (and the stops), until the matcher was done (at most 30 s)
}

// Drive starts cfg.Vehicles trips and, for cfg.Duration, uploads each
// vehicle's points as it drives: a random drive along the roads the auto
// costing may take, at 90 % of each road's speed limit (at most
// 100 km/h), never turning round but at a dead end, a point every
// cfg.Every with Gaussian noise of cfg.Noise meters and that accuracy.
// The uploads are paced over the upload period so that the vehicles
// report evenly; each carries the points the vehicle took since its
// last one, stamped with the time they were taken.
func Drive(ctx context.Context, cfg DriveConfig) (*DriveResult, error) {
	cfg.defaults()
	if cfg.Vehicles == 0 {
		cfg.Vehicles = 1000
	}
	if cfg.Every == 0 {
		cfg.Every = time.Second
	}
	if cfg.Upload == 0 {
		cfg.Upload = cfg.Every
	}
	if cfg.Noise == 0 {
		cfg.Noise = 5
	}
	if cfg.Vehicles < cfg.Conns {
		cfg.Conns = cfg.Vehicles
	}
	// each connection's turn comes round its vehicles once per upload
	// period: with as many vehicles on each, no turn finds a vehicle
	// with nothing new to send
	for c := cfg.Conns; c >= (cfg.Conns+1)/2; c-- {
		if cfg.Vehicles%c == 0 {
			cfg.Conns = c
			break
		}
	}
	f, err := os.Open(cfg.OSM)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	g, err := routing.Read(bufio.NewReaderSize(f, 1<<20))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", cfg.OSM, err)
	}
	rd := newRoadWalk(g)
	if len(rd.edges) == 0 {
		return nil, fmt.Errorf("bench: %s: no road a car may drive", cfg.OSM)
	}
	run0 := time.Now().UnixNano()
	// the trips start a period before the first points
	start := time.Now().Add(-cfg.Upload - time.Second).UTC()
	ids, err := startTrips(ctx, cfg.Config, cfg.Vehicles, fmt.Sprintf("drive-%d", run0), start)
	if err != nil {
		return nil, err
	}
	// worker w uploads for vehicles w, w+Conns, …, one a request, at the
	// pace that brings each vehicle's turn round once per upload period:
	// vehicle w+k·Conns first at t0 + (w/Conns + k)·Upload/perWorker,
	// with the points of the period before it
	perWorker := (cfg.Vehicles + cfg.Conns - 1) / cfg.Conns
	slot := cfg.Upload / time.Duration(perWorker)
	t0 := time.Now()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x64726976))
	cars := make([]*car, cfg.Vehicles)
	for v := range cars {
		w, k := v%cfg.Conns, v/cfg.Conns
		first := t0.Add(slot*time.Duration(k) + slot*time.Duration(w)/time.Duration(cfg.Conns))
		cars[v] = rd.place(rng, first.Add(cfg.Every-cfg.Upload))
		cars[v].rng = rand.New(rand.NewPCG(cfg.Seed, uint64(v)+1))
	}
	before, err := readRoadMetrics(ctx, cfg.Server, cfg.URL)
	roads := err == nil
	if err != nil && !errors.Is(err, errNoRoads) {
		return nil, err
	}
	cpu0, _, _ := cfg.Server.usage(ctx, cfg.URL)

	// the steady part of the drive begins once every vehicle has
	// uploaded twice and its points had time to be decided
	steadyFrom := min(2*cfg.Upload+5*time.Second, cfg.Duration/2)
	type snapshot struct {
		m   roadMetrics
		err error
	}
	mid := make(chan snapshot, 1)
	if roads {
		go func() {
			select {
			case <-time.After(time.Until(t0.Add(steadyFrom))):
			case <-ctx.Done():
			}
			m, err := readRoadMetrics(ctx, cfg.Server, cfg.URL)
			mid <- snapshot{m, err}
		}()
	}
	lc := cfg.Config
	lc.Rate = float64(cfg.Conns*perWorker) / cfg.Upload.Seconds()
	url := cfg.URL + "/v1/locations/batch"
	bufs := make([][]byte, cfg.Conns)
	res, err := run(ctx, "drive", lc, func(w, i int, req *fasthttp.Request) int {
		v := w + (i%perWorker)*cfg.Conns
		if v >= cfg.Vehicles {
			v = w // the last round's workers beyond the fleet send for their first vehicle again
		}
		c := cars[v]
		b := bufs[w][:0]
		b = append(b, `{"trip_id":"`...)
		b = append(b, ids[v]...)
		b = append(b, `","locations":[`...)
		n := 0
		for now := time.Now(); !c.next.After(now) && n < 1000; n++ {
			if n > 0 {
				b = append(b, ',')
			}
			at := len(b)
			b = rd.point(b, c, cfg.Every, cfg.Noise)
			c.last = append(c.last[:0], b[at:]...)
		}
		if n == 0 {
			// a turn with nothing new (the vehicles do not divide evenly
			// among the connections, or the vehicle has not uploaded
			// yet): its last point again, which the server turns down
			// as a duplicate, or its first point now
			if c.last == nil {
				b = rd.point(b, c, cfg.Every, cfg.Noise)
				n = 1
			} else {
				b = append(b, c.last...)
			}
		}
		b = append(b, "]}"...)
		bufs[w] = b
		jsonPOST(req, url, b)
		return n
	}, func(st int) bool { return st == 200 })
	if err != nil {
		return nil, err
	}
	out := &DriveResult{Result: res, Vehicles: cfg.Vehicles, Conns: cfg.Conns, Points: res.Items}
	var steady *histogram
	if roads {
		from := <-mid
		if from.err != nil {
			return nil, from.err
		}
		end, err := readRoadMetrics(ctx, cfg.Server, cfg.URL)
		if err != nil {
			return nil, err
		}
		steady = end.lag.minus(from.m.lag)
	}
	if cfg.Stop {
		t0 := time.Now()
		if err := stopTrips(ctx, cfg.Config, ids); err != nil {
			return nil, err
		}
		out.Stopped = time.Since(t0)
	}
	if roads {
		// the matcher works behind the uploads: wait until its queue is empty
		t0 := time.Now()
		var after roadMetrics
		// (a stop's job carries no points: the count of decided points
		// standing still for 200 ms tells those are done too)
		last := -1.0
		for {
			if after, err = readRoadMetrics(ctx, cfg.Server, cfg.URL); err != nil {
				return nil, err
			}
			if after.queued == 0 && after.lag.count == last || time.Since(t0) > 30*time.Second || ctx.Err() != nil {
				break
			}
			last = after.lag.count
			time.Sleep(200 * time.Millisecond)
		}
		out.Roads = &RoadFigures{Settle: time.Since(t0), Lag: steady, SteadyFrom: steadyFrom, WholeLag: after.lag.minus(before.lag), Wait: after.wait.minus(before.wait), Overflow: int64(after.overflow - before.overflow), Queued: after.queued}
		out.Roads.Judged = int64(out.Roads.WholeLag.count)
	}
	cpu1, rss, src := cfg.Server.usage(ctx, cfg.URL)
	out.CPU, out.RSS, out.CPUSource = cpu1-cpu0, rss, src
	return out, nil
}

// Report is the drive's figures.
func (r *DriveResult) Report() *Report {
	rep := r.Result.Report()
	rep.Mode = "drive"
	secs := r.Elapsed.Seconds()
	rep.Add("vehicles", "vehicles", r.Vehicles, "")
	rep.Add("conns", "connections", r.Conns, "")
	rep.Add("points", "points uploaded (answered 200)", r.Points, "")
	rep.Add("points_per_s", "point rate", float64(r.Points)/secs, "points/s")
	if r.Stopped > 0 {
		rep.Add("stopped_ms", "trips stopped after the uploads in", r.Stopped, "")
	}
	if rf := r.Roads; rf != nil {
		rf.rows(rep)
	}
	serverRows(rep, r.CPUSource, r.CPU, secs, r.RSS)
	if r.CPUSource != "" && r.Points > 0 {
		rep.Add("server_cpu_per_point_us", "server CPU per point", 1e6*r.CPU/float64(r.Points), "µs")
	}
	return rep
}

func (r *RoadFigures) rows(rep *Report) {
	rep.Add("judged", "points whose road became final", r.Judged, "")
	rep.Add("overflow", "points judged without a road (queue full)", r.Overflow, "")
	rep.Add("queued_end", "points waiting for the matcher at the end", int64(r.Queued), "")
	rep.Add("settle", "matcher done after the last upload", r.Settle, "")
	if r.Wait.count > 0 {
		rep.Add("wait_p50_ms", "taken up by the matcher after acceptance p50", seconds(r.Wait.quantile(0.5)), "")
		rep.Add("wait_p99_ms", "taken up by the matcher after acceptance p99", seconds(r.Wait.quantile(0.99)), "")
	}
	if r.Lag.count > 0 {
		rep.Add("steady_from_ms", "steady part of the drive from", r.SteadyFrom, "")
		rep.Add("steady_judged", "points whose road became final in it", int64(r.Lag.count), "")
		rep.Add("lag_p50_ms", "road final after acceptance p50", seconds(r.Lag.quantile(0.5)), "")
		rep.Add("lag_p90_ms", "road final after acceptance p90", seconds(r.Lag.quantile(0.9)), "")
		rep.Add("lag_p99_ms", "road final after acceptance p99", seconds(r.Lag.quantile(0.99)), "")
		rep.Add("lag_within_5s_pct", "road final within 5 s", 100*r.Lag.within(5), "%")
	}
	if r.WholeLag.count > 0 {
		rep.Add("whole_lag_p99_ms", "whole run (first uploads, stops) p99", seconds(r.WholeLag.quantile(0.99)), "")
		rep.Add("whole_lag_within_5s_pct", "whole run within 5 s", 100*r.WholeLag.within(5), "%")
	}
}

// Print writes the report as a table.
func (r *DriveResult) Print(w io.Writer) { r.Report().WriteTable(w) }

// roadWalk is the road network as the vehicles drive it: directed edges
// (edge e forward is 2e, backward 2e+1) that the auto costing may take,
// and those leaving each junction.
type roadWalk struct {
	g     *routing.Graph
	edges []int32             // directed edges a car may take
	out   [][]int32           // per junction, the directed edges leaving it
	geom  map[int32]*edgeGeom // per directed edge in edges
}

type edgeGeom struct {
	lat, lon []float64
	cum      []float64 // meters from the edge's first point, per point
	kmh      float64   // the speed driven: 90 % of the limit, at most 100 km/h
}

func newRoadWalk(g *routing.Graph) *roadWalk {
	rd := &roadWalk{g: g, out: make([][]int32, g.Nodes()), geom: map[int32]*edgeGeom{}}
	for e := 0; e < g.Edges(); e++ {
		fw, bw := g.EdgeOpen(e, routing.Auto)
		tail, head := g.EdgeEnds(e)
		if fw {
			rd.add(int32(2*e), tail)
		}
		if bw {
			rd.add(int32(2*e+1), head)
		}
	}
	return rd
}

// add takes directed edge d, leaving junction from, with its points in
// the direction of travel.
func (rd *roadWalk) add(d int32, from int) {
	rd.edges = append(rd.edges, d)
	rd.out[from] = append(rd.out[from], d)
	e := int(d / 2)
	lat, lon := rd.g.EdgePoints(e, nil, nil)
	if d%2 == 1 {
		for i, j := 0, len(lat)-1; i < j; i, j = i+1, j-1 {
			lat[i], lat[j], lon[i], lon[j] = lat[j], lat[i], lon[j], lon[i]
		}
	}
	cum := make([]float64, len(lat))
	for i := 1; i < len(lat); i++ {
		cum[i] = cum[i-1] + meters(lat[i-1], lon[i-1], lat[i], lon[i])
	}
	rd.geom[d] = &edgeGeom{lat: lat, lon: lon, cum: cum, kmh: min(0.9*rd.g.EdgeRoad(e, d%2 == 1).LimitKmh, 100)}
}

// head is the junction directed edge d ends at.
func (rd *roadWalk) head(d int32) int {
	tail, head := rd.g.EdgeEnds(int(d / 2))
	if d%2 == 1 {
		return tail
	}
	return head
}

// car is one vehicle: where it is and when its next point is taken.
type car struct {
	d    int32   // the directed edge it is on
	s    float64 // meters along it
	next time.Time
	last []byte // the last point it uploaded, as JSON
	rng  *rand.Rand
}

// place puts a car at a random place of the network, its first point
// due at start.
func (rd *roadWalk) place(rng *rand.Rand, start time.Time) *car {
	d := rd.edges[rng.IntN(len(rd.edges))]
	cum := rd.geom[d].cum
	return &car{d: d, s: rng.Float64() * cum[len(cum)-1], next: start}
}

// point appends the car's next point to b and drives it on by every.
func (rd *roadWalk) point(b []byte, c *car, every time.Duration, noise float64) []byte {
	eg := rd.geom[c.d]
	i := 1
	for i < len(eg.cum)-1 && eg.cum[i] < c.s {
		i++
	}
	seg := eg.cum[i] - eg.cum[i-1]
	t := 0.0
	if seg > 0 {
		t = min(max((c.s-eg.cum[i-1])/seg, 0), 1)
	}
	lat := eg.lat[i-1] + t*(eg.lat[i]-eg.lat[i-1])
	lon := eg.lon[i-1] + t*(eg.lon[i]-eg.lon[i-1])
	heading := bearing(eg.lat[i-1], eg.lon[i-1], eg.lat[i], eg.lon[i])
	lat += c.rng.NormFloat64() * noise / 111_320
	lon += c.rng.NormFloat64() * noise / (111_320 * math.Cos(lat*math.Pi/180))
	b = append(b, `{"latitude":`...)
	b = strconv.AppendFloat(b, lat, 'f', 7, 64)
	b = append(b, `,"longitude":`...)
	b = strconv.AppendFloat(b, lon, 'f', 7, 64)
	b = append(b, `,"timestamp":"`...)
	b = c.next.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","speed_kmh":`...)
	b = strconv.AppendFloat(b, eg.kmh, 'f', 1, 64)
	b = append(b, `,"heading":`...)
	b = strconv.AppendFloat(b, heading, 'f', 1, 64)
	b = append(b, `,"accuracy_meters":`...)
	b = strconv.AppendFloat(b, max(noise, 1), 'f', 1, 64)
	b = append(b, '}')
	rd.drive(c, eg.kmh/3.6*every.Seconds())
	c.next = c.next.Add(every)
	return b
}

// drive moves the car m meters on: at a junction onto a random road
// leaving it other than the way back, turning round only at a dead end,
// and to a random road of the network where no road leads on.
func (rd *roadWalk) drive(c *car, m float64) {
	c.s += m
	for hops := 0; ; hops++ {
		if hops == 10_000 { // a ring of roads of no length
			c.d, c.s = rd.edges[c.rng.IntN(len(rd.edges))], 0
			return
		}
		eg := rd.geom[c.d]
		length := eg.cum[len(eg.cum)-1]
		if c.s <= length {
			return
		}
		c.s -= length
		outs := rd.out[rd.head(c.d)]
		var on []int32
		back := int32(-1)
		for _, d := range outs {
			if d/2 == c.d/2 {
				back = d
				continue
			}
			on = append(on, d)
		}
		switch {
		case len(on) > 0:
			c.d = on[c.rng.IntN(len(on))]
		case back >= 0:
			c.d = back
		default:
			c.d, c.s = rd.edges[c.rng.IntN(len(rd.edges))], 0
			return
		}
	}
}

// seconds is s seconds as a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// meters between two places, on a sphere.
func meters(lat1, lon1, lat2, lon2 float64) float64 {
	const r = 6_371_000.0
	p1, p2 := lat1*math.Pi/180, lat2*math.Pi/180
	dp, dl := p2-p1, (lon2-lon1)*math.Pi/180
	a := math.Sin(dp/2)*math.Sin(dp/2) + math.Cos(p1)*math.Cos(p2)*math.Sin(dl/2)*math.Sin(dl/2)
	return 2 * r * math.Asin(math.Sqrt(min(a, 1)))
}

// bearing from the first place to the second, degrees clockwise from
// north.
func bearing(lat1, lon1, lat2, lon2 float64) float64 {
	p1, p2 := lat1*math.Pi/180, lat2*math.Pi/180
	dl := (lon2 - lon1) * math.Pi / 180
	deg := math.Atan2(math.Sin(dl)*math.Cos(p2), math.Cos(p1)*math.Sin(p2)-math.Sin(p1)*math.Cos(p2)*math.Cos(dl)) * 180 / math.Pi
	return math.Mod(deg+360, 360)
}
