package main

import (
	"flag"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fleethub/fleethub/bench"
)

// modes are the generators, in the order the usage lists them.
var modes = []string{"health", "ingest", "drive", "fanout", "sse", "webhook", "events", "matrix", "optimize", "idle", "memory", "broker", "soak"}

// Groups of modes that share flags.
var (
	// serverModes drive a running server at --url with --key.
	serverModes = []string{"health", "ingest", "drive", "fanout", "sse", "webhook", "events", "matrix", "optimize", "idle", "memory"}
	// loadModes send requests from --conns workers at --rate.
	loadModes = []string{"health", "ingest", "drive", "webhook", "events", "matrix", "optimize"}
	// tlsModes reach an https:// (wss://) server, --insecure accepting a
	// self-signed certificate.
	tlsModes = []string{"health", "fanout", "sse", "idle"}
)

// flags are the command line of one generator.
type flags struct {
	c           bench.Config
	trips       int
	batch       int
	subs        int
	clients     int
	dead        bool
	healthy     bool
	isolation   int
	whBatch     int
	kind        string
	port        int
	batchEvents bool
	maxWait     int
	senders     int
	receivers   int
	bad         bool
	badKinds    string
	subURL      string
	centrifugo  string
	eps         int
	events      int
	size        int
	cpuProfile  string
	vrpDir      string
	vrpMatch    string
	timeLimit   float64
	seed        int64
	osm         string
	every       time.Duration
	upload      time.Duration
	noise       float64
	stop        bool

	fleethub    string
	redisURL    string
	databaseURL string
	soakDir     string
	redisServer string
	pointsRate  int
	telRate     int
	receiver    time.Duration
	durationSet bool
	tripsSet    bool

	streams  int
	filters  string
	rules    string
	vehicles int
	latency  bool

	// output and the server process
	json     bool
	quiet    bool
	pid      int
	insecure bool
	tls      bool
}

// modeFlags registers the flags of one mode on fs; only the mode's own
// appear in its -h.
type modeFlags struct {
	fs   *flag.FlagSet
	f    *flags
	mode string
}

func (m modeFlags) in(group ...string) bool { return slices.Contains(group, m.mode) }

// pick is the value of def for the mode, def[""] for the others.
func pick[T any](mode string, def map[string]T) T {
	if v, ok := def[mode]; ok {
		return v
	}
	return def[""]
}

// parseFlags reads the flags of generator name; the flag set has written
// any error (or the help) to stderr.
func parseFlags(name string, args []string, stderr io.Writer) (*flags, error) {
	fs := flag.NewFlagSet("fleethub-bench "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &flags{}
	m := modeFlags{fs: fs, f: f, mode: name}
	m.common()
	m.load()
	m.streaming()
	m.webhookEventsMemory()
	m.optimize()
	m.soak()
	fs.Usage = func() {
		out := fs.Output()
		io.WriteString(out, "usage: fleethub-bench "+name+" [flags]\n\nflags of "+name+":\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	fs.Visit(func(fl *flag.Flag) {
		f.durationSet = f.durationSet || fl.Name == "duration"
		f.tripsSet = f.tripsSet || fl.Name == "trips"
	})
	if f.tls {
		f.c.URL = strings.Replace(f.c.URL, "http://", "https://", 1)
		f.subURL = strings.Replace(f.subURL, "http://", "https://", 1)
	}
	return f, nil
}

func (m modeFlags) common() {
	fs, f := m.fs, m.f
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write the generator's own CPU profile to this file")
	if m.mode != "broker" {
		fs.BoolVar(&f.json, "json", false, "print the result as one JSON object (for CI) instead of a table")
		fs.BoolVar(&f.quiet, "quiet", false, "no progress line on stderr")
	}
	if m.in(serverModes...) {
		fs.StringVar(&f.c.URL, "url", "http://127.0.0.1:8080", "server address (https:// for a server with --tls-cert)")
		fs.StringVar(&f.c.Key, "key", os.Getenv("FLEETHUB_BENCH_KEY"), "API key (or FLEETHUB_BENCH_KEY)")
		fs.IntVar(&f.pid, "pid", 0, "process id of the server on this machine: its CPU and memory are read from /proc/<pid> (progress line and results)")
	}
	if m.in(tlsModes...) {
		fs.BoolVar(&f.insecure, "insecure", false, "accept any certificate of an https:// server (a self-signed one)")
	}
	if m.in("fanout", "sse") {
		fs.BoolVar(&f.tls, "tls", false, pick(m.mode, map[string]string{
			"fanout": "reach --url (and --subscribe-url) over https:// and wss:// (the server's --tls-cert; with --insecure for a self-signed one)",
			"sse":    "reach --url over https:// (the server's --tls-cert; with --insecure for a self-signed one)"}))
	}
	if m.mode != "broker" && m.mode != "memory" {
		fs.DurationVar(&f.c.Duration, "duration", 10*time.Second, pick(m.mode, map[string]string{"": "run time", "idle": "how long the connections are held",
			"soak": "length of the soak (default: its phases' own)"}))
	}
}

func (m modeFlags) load() {
	fs, f := m.fs, m.f
	if m.in(loadModes...) {
		fs.IntVar(&f.c.Conns, "conns", pick(m.mode, map[string]int{"": 64, "events": 8}), "concurrent connections")
		if m.mode != "drive" { // paced by the vehicles' uploads
			fs.Float64Var(&f.c.Rate, "rate", 0, pick(m.mode, map[string]string{"": "requests per second in total (0: as fast as possible)",
				"events": "events per second (0: as fast as possible)"}))
		}
	}
	if m.in("ingest", "soak") {
		fs.IntVar(&f.trips, "trips", 256, pick(m.mode, map[string]string{"": "trips in parallel", "soak": "vehicles on trips (default 2000)"}))
	}
	if m.in("drive") {
		fs.StringVar(&f.osm, "osm", "", "the extract the server was started with (--osm; .osm.pbf or OSM XML, plain, gzip or bzip2): the vehicles drive its roads")
		fs.IntVar(&f.vehicles, "vehicles", 1000, "vehicles, each on a trip of its own")
		fs.DurationVar(&f.every, "every", time.Second, "each vehicle takes a point this often")
		fs.DurationVar(&f.upload, "upload-every", 0, "each vehicle uploads the points it took this often (default --every)")
		fs.Float64Var(&f.noise, "noise", 5, "GPS error, meters on each axis (and the points' accuracy_meters)")
		fs.Int64Var(&f.seed, "seed", 1, "seed of the drives")
		fs.BoolVar(&f.stop, "stop", false, "stop every trip after the uploads, so that the points still in the matcher's windows reach a road too")
	}
	if m.in("ingest") {
		fs.StringVar(&f.kind, "kind", "locations", "locations (POST /v1/locations/batch) or telemetry (POST /v1/telemetry; --batch at most 1000)")
	}
	if m.in("ingest", "fanout", "sse", "webhook", "events") {
		fs.IntVar(&f.batch, "batch", pick(m.mode, map[string]int{"ingest": 1000, "fanout": 50, "sse": 50, "webhook": 100, "events": 500}),
			pick(m.mode, map[string]string{"ingest": "points per batch", "": "events per ingest request"}))
	}
	if m.in("broker") {
		fs.IntVar(&f.port, "port", 0, "listen port (0: any)")
		fs.StringVar(&f.soakDir, "dir", "", "keep the broker's log here across restarts")
	}
}

func (m modeFlags) streaming() {
	fs, f := m.fs, m.f
	if m.in("fanout", "idle", "memory") {
		fs.IntVar(&f.subs, "subscribers", 100, pick(m.mode, map[string]string{"fanout": "websocket subscribers", "idle": "connections", "memory": "streams"}))
	}
	if m.in("sse") {
		fs.IntVar(&f.clients, "clients", 100, "Server-Sent Events clients on the organization's feed")
	}
	if m.in("fanout", "sse") {
		fs.IntVar(&f.eps, "events-per-sec", 1000, "events ingested per second")
	}
	if m.in("fanout") {
		fs.BoolVar(&f.batchEvents, "batch-events", false, "start the stream with batch_events")
		fs.IntVar(&f.maxWait, "max-wait-ms", 20, "max_wait_time of batch_events, milliseconds")
		fs.IntVar(&f.senders, "senders", 4, "parallel publishers, each with one ingest request in flight")
		fs.StringVar(&f.subURL, "subscribe-url", "", "node the websocket clients connect to (default --url)")
		fs.StringVar(&f.centrifugo, "centrifugo-key", "", "drive a Centrifugo server at --url instead, with this key of its HTTP API: a channel per stream, the same subscribers, senders and events, so that the CPU figures compare on one machine")
		fs.IntVar(&f.streams, "streams", 1, "event streams, each of its own vehicles: subscriber i follows stream i modulo this, the events are spread over them (1,000 with --subscribers 1000: one subscriber a stream)")
	}
}

func (m modeFlags) webhookEventsMemory() {
	fs, f := m.fs, m.f
	if m.in("webhook") {
		fs.BoolVar(&f.dead, "dead-neighbour", false, "add a stream whose receiver never answers")
		fs.BoolVar(&f.healthy, "healthy-neighbour", false, "add a stream whose receiver answers at once")
		fs.IntVar(&f.receivers, "receivers", 1, "healthy receivers, each checking the signatures of a stream of its own on the same events")
		fs.BoolVar(&f.bad, "bad-neighbours", false, "add five streams on the same events whose receivers are down, never answer, answer after 1 s, fail every other request, answer 410")
		fs.StringVar(&f.badKinds, "bad", "", "add only some of those streams, a comma-separated list of down, hung (never answers), slow, flaky, gone")
		fs.IntVar(&f.isolation, "isolation", 0, "run this many rounds of two phases of --duration each, alone then beside a dead neighbour, in one server process, and compare")
		fs.IntVar(&f.whBatch, "batch-size", 0, "batch_events size (deliveries carry arrays)")
	}
	if m.in("memory") {
		fs.IntVar(&f.events, "events", 20000, "events ingested (every stream matches each)")
		fs.IntVar(&f.size, "size", 2600, "bytes of each event")
	}
	if m.in("events") {
		fs.IntVar(&f.streams, "streams", 100, "events streams started")
		fs.StringVar(&f.filters, "filters", "mix", "mix (9 in 10 streams follow a group of vehicles, the rest a category each: 3 of 100 streams match each event) or all (every stream matches every event)")
		fs.StringVar(&f.rules, "rules", "none", "processing rules of every stream (with --latency, of stream A): none, or a comma list of deduplication (dedup) and event_ordering (ordering)")
		fs.IntVar(&f.vehicles, "vehicles", 1000, "vehicles (each sender owns some, their sequence numbers in order)")
		fs.BoolVar(&f.latency, "latency", false, "instead of throughput, two streams of the same filter, A with --rules and B without, each followed over websocket: per event, arrival on A minus arrival on B")
	}
}

func (m modeFlags) optimize() {
	fs, f := m.fs, m.f
	if m.in("optimize") {
		fs.StringVar(&f.vrpDir, "vrp", "", "solve the instances of this directory (Solomon or Gehring-Homberger *.txt, CVRPLIB *.vrp, with bks.csv) one by one, re-check each plan and compare it with the best known, instead of load")
		fs.StringVar(&f.vrpMatch, "instances", "", "with --vrp: a glob on instance names, e.g. 'R1*' (default every one)")
		fs.Float64Var(&f.timeLimit, "time-limit", 2, "with --vrp: options.time_limit_seconds of each instance")
		fs.Int64Var(&f.seed, "seed", 0, "with --vrp: options.seed")
	}
}

func (m modeFlags) soak() {
	fs, f := m.fs, m.f
	if !m.in("soak") {
		return
	}
	fs.Float64Var(&f.c.Rate, "rate", 0, "events a second (default 2000)")
	fs.StringVar(&f.fleethub, "fleethub", "fleethub", "the fleethub binary the nodes run")
	fs.StringVar(&f.redisServer, "redis-server", "", "a redis-server binary: run a Redis of the soak's own (append-only file, synced) and SIGKILL and restart it, instead of cutting --redis-url's connections")
	fs.StringVar(&f.redisURL, "redis-url", os.Getenv("FLEETHUB_TEST_REDIS_URL"), "Redis the nodes share (or FLEETHUB_TEST_REDIS_URL); reached through a proxy the soak cuts")
	fs.StringVar(&f.databaseURL, "database-url", os.Getenv("FLEETHUB_TEST_DATABASE_URL"), "PostgreSQL server the soak makes a schema in (or FLEETHUB_TEST_DATABASE_URL); reached through a proxy the soak hangs")
	fs.IntVar(&f.pointsRate, "points-rate", 20000, "location points a second")
	fs.IntVar(&f.telRate, "telemetry-rate", 1000, "telemetry messages a second")
	fs.DurationVar(&f.receiver, "receiver-down", 5*time.Minute, "how long the webhook receiver is down (at most 3/4 of a phase)")
	fs.StringVar(&f.soakDir, "dir", "", "keep the nodes' and the broker's logs and data here (default: a temporary directory, removed)")
}
