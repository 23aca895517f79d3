package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/hub/seglog"
	"github.com/fleethub/fleethub/internal/routing"
)

// config is every serve setting; each flag also reads FLEETHUB_<NAME>.
type config struct {
	Addr          string
	Data          string
	DatabaseURL   string
	KafkaBrokers  string
	RedisURL      string
	KeySecret     string
	MaxBodyBytes  int
	LogLevel      string
	LogFormat     string
	ShutdownGrace time.Duration
	SpeedLimitKmh float64
	ActiveTrips   int
	DebugAddr     string

	AllowPrivateWebhooks bool
	WebhookConcurrency   int
	NotifyURL            string
	Addresses            string
	Tiles                string
	OSM                  string
	OSMCostings          string

	LogRetention time.Duration
	LogMaxBytes  int64
	// SolverWorkRate is the optimizer's work per second of a time limit;
	// 0 measures the machine at start (optimization.Service.Calibrate).
	SolverWorkRate int64
	// OrderWait is how long an event_ordering stream waits for a
	// sequence gap to fill (0: the pipeline's default).
	OrderWait time.Duration
	// WSWriteLinger is ws.Config.WriteLinger; 0 turns it off.
	WSWriteLinger time.Duration
	// SSEHeartbeat is the interval of an idle event stream's heartbeat
	// (0: api/feed's 15 s; tests shorten it).
	SSEHeartbeat time.Duration
	// WebhookRetryFor is how long a failed webhook delivery is retried
	// before it is dead-lettered (0: webhook.DefaultRetryFor, 24 h; tests
	// shorten it).
	WebhookRetryFor time.Duration
	// GeofenceRefresh is how long the geofence watcher uses a tenant's
	// geofences before it reads them again (0: crossings' 2 s; tests
	// shorten it).
	GeofenceRefresh time.Duration
	// Now is the clock of the trip service (it times pauses) and of the
	// webhook dispatcher (it caches secrets, retries and leases by it);
	// nil: time.Now. Tests move it ahead instead of waiting.
	Now func() time.Time

	TLSCert   string
	TLSKey    string
	PlainAddr string
	// TLSReloadCheck is how often the TLS files are looked at for a new
	// pair (0: certreload's default; tests shorten it).
	TLSReloadCheck time.Duration
}

// envName turns a flag name into its environment variable.
func envName(flagName string) string {
	return "FLEETHUB_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags parses args; flags not given on the command line take their
// environment variable, then the default. An environment variable set to
// the empty string counts as unset, for every flag alike; one whose value
// does not parse is refused naming it and saying what the flag takes.
//
// A flag that does not parse (or is not defined) is returned as the
// error alone, for the caller to print once with a pointer to -h; the
// flag package would print it and the whole flag list as well. -h and
// --help print the list and return flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case err == flag.ErrHelp:
		usage() // flag.NewFlagSet sets one
		return err
	case err != nil:
		return fmt.Errorf("%w (-h lists the flags)", err)
	}
	if fs.NArg() > 0 {
		// a word among the flags ends their parsing: the flags after it
		// would be silently dropped
		return fmt.Errorf("unexpected argument %q: %s takes flags only (-h lists them)", fs.Arg(0), fs.Name())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		if v := os.Getenv(envName(f.Name)); v != "" {
			if e := f.Value.Set(v); e != nil {
				if e.Error() == "parse error" { // the flag package's word for any value that does not parse
					err = fmt.Errorf("%s=%q: %s", envName(f.Name), v, expects(f))
				} else {
					err = fmt.Errorf("%s=%q: %s: %w", envName(f.Name), v, expects(f), e)
				}
			}
		}
	})
	return err
}

// expects says what a flag's value must be, by the kind of its default:
// the reason a value that does not parse is refused.
func expects(f *flag.Flag) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "not a valid value for --" + f.Name
	}
	switch g.Get().(type) {
	case bool:
		return "must be true or false"
	case int, int64, uint, uint64:
		if strings.HasSuffix(f.Name, "-bytes") {
			return "must be a whole number of bytes"
		}
		return "must be a whole number"
	case float64:
		return "must be a number"
	case time.Duration:
		return "must be a duration such as 500ms, 30s or 2h45m"
	}
	return "not a valid value for --" + f.Name
}

// checkSettings refuses a setting out of its range, naming its flag: an
// empty --data, a negative size, duration or rate, a --notify-url that
// is not an http(s) URL, a speed limit that is not a speed, a costing
// --osm-costings does not know (whether or not --osm is given).
func (c *config) checkSettings() error {
	switch {
	case strings.TrimSpace(c.Data) == "":
		// the store, the bus and the stream logs would part ways
		return errors.New("--data must name a directory (default ./data)")
	case c.MaxBodyBytes < 0:
		return fmt.Errorf("--max-body-bytes must be positive (0: the default, %d), not %d", api.DefaultMaxBodyBytes, c.MaxBodyBytes)
	case c.LogRetention < 0:
		return fmt.Errorf("--log-retention must be positive (0: the default, %s), not %s", seglog.DefaultRetention, c.LogRetention)
	case c.LogMaxBytes < 0:
		return fmt.Errorf("--log-max-bytes must be positive (0: the default, %d), not %d", int64(seglog.DefaultMaxBytes), c.LogMaxBytes)
	case c.ShutdownGrace < 0:
		return fmt.Errorf("--shutdown-grace must not be negative, not %s", c.ShutdownGrace)
	case c.SolverWorkRate < 0:
		return fmt.Errorf("--solver-work-rate must be positive (0: measured at start), not %d", c.SolverWorkRate)
	case c.NotifyURL != "" && !httpURL(c.NotifyURL):
		// the URL is not quoted: it may hold the gateway's credentials
		return errors.New("--notify-url must be an http:// or https:// URL with a host")
	case !(c.SpeedLimitKmh >= 0) || math.IsInf(c.SpeedLimitKmh, 0):
		return fmt.Errorf("--speed-limit-kmh must be a speed in km/h above 0 (0: the default, 100), not %v", c.SpeedLimitKmh)
	}
	if _, err := osmCostings(c.OSMCostings); err != nil { // with --osm or not: a typo is not kept for the day --osm is added
		return err
	}
	return nil
}

// osmCostings reads --osm-costings, a comma list of costings (none
// named: auto).
func osmCostings(list string) ([]routing.Costing, error) {
	var out []routing.Costing
	for _, name := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' }) {
		c, ok := routing.ParseCosting(strings.TrimSpace(name))
		if !ok {
			return nil, fmt.Errorf("--osm-costings: %q is not auto, truck, bicycle or pedestrian", name)
		}
		out = append(out, c)
	}
	return out, nil
}

// httpURL reports whether s is an absolute http or https URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func storeFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.Data, "data", "./data", "directory of the embedded SQLite store")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "postgres://... switches the store to PostgreSQL")
	fs.StringVar(&c.KeySecret, "key-secret", "", "server secret for API key hashes (default: generated once and kept in the store)")
}

func serveFlags(w io.Writer) (*flag.FlagSet, *config) {
	c := &config{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(w)
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "listen address (HTTPS and wss:// with --tls-cert and --tls-key)")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "PEM certificate (chain) file: --addr serves HTTPS; reloaded when the file changes")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM private key file of --tls-cert")
	fs.StringVar(&c.PlainAddr, "plain-addr", "", "a second listen address serving plain HTTP beside an HTTPS --addr (e.g. 127.0.0.1:8081 for local health checks)")
	storeFlags(fs, c)
	fs.StringVar(&c.KafkaBrokers, "kafka-brokers", "", "comma list of Kafka brokers; switches the bus to Kafka")
	fs.StringVar(&c.RedisURL, "redis-url", "", "redis://... shares rate limits, dedup and the stream registry across nodes")
	fs.IntVar(&c.MaxBodyBytes, "max-body-bytes", 8<<20, "largest accepted request body (the route optimizer takes up to 64 MiB, or this when larger; 0: the default)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "text or json")
	fs.Float64Var(&c.SpeedLimitKmh, "speed-limit-kmh", 100, "organization default speed limit for speeding detection when no device setting applies (0: the default)")
	fs.IntVar(&c.ActiveTrips, "active-trips", trips.DefaultActiveTrips, "trips whose analysis (and, with --osm, road matching) state stays in memory between uploads; a trip beyond it is read back from the store at its next upload and its road trace starts again (0: the default)")
	fs.BoolVar(&c.AllowPrivateWebhooks, "allow-private-webhooks", false, "let webhooks reach loopback, private, link-local, CGNAT and metadata addresses (tests and local use only)")
	fs.IntVar(&c.WebhookConcurrency, "webhook-concurrency", webhook.DefaultConcurrency, "webhook requests in flight per endpoint (each stream's webhook_url; 0: the default)")
	fs.StringVar(&c.Addresses, "addresses", "", "comma list of address files for geocoding: OpenAddresses CSV (LON,LAT,NUMBER,STREET,UNIT,CITY,DISTRICT,REGION,POSTCODE,ID,HASH) or GeoJSON, or {\"addresses\": [{address1, …}]} JSON; the index is saved under --data/geocode; without it geocoding answers 501")
	fs.StringVar(&c.OSM, "osm", "", "OpenStreetMap extract whose roads the distance matrix routes over: .osm.pbf, or OSM XML plain, gzip- or bzip2-compressed (.osm, .osm.gz, .osm.bz2), the format recognised by content (without it the matrix answers 501)")
	fs.StringVar(&c.OSMCostings, "osm-costings", "auto", "costings whose routing graphs are prepared at start, comma-separated (auto, truck, bicycle, pedestrian); the others are prepared when first asked for")
	fs.StringVar(&c.Tiles, "tiles", "", "PMTiles v3 archive served as the building tiles (without it the tile endpoints answer 501)")
	fs.StringVar(&c.NotifyURL, "notify-url", "", "notification gateway for emergency alerts: each SMS, e-mail, push and voice notification is POSTed there as JSON")
	fs.StringVar(&c.DebugAddr, "debug-addr", "", "if set, serve Go pprof profiles on this address (e.g. 127.0.0.1:6060)")
	fs.DurationVar(&c.LogRetention, "log-retention", seglog.DefaultRetention, "how long the embedded bus and stream logs under --data keep messages (0: the default)")
	fs.Int64Var(&c.LogMaxBytes, "log-max-bytes", seglog.DefaultMaxBytes, "disk bytes each of the embedded bus and stream logs keeps at most (oldest segments deleted first; 0: the default)")
	fs.Int64Var(&c.SolverWorkRate, "solver-work-rate", 0, "work units a route optimization search gets per second of its time limit; 0 measures this machine at start and gives 87 % of one core's rate (docs/optimization.md). A fixed value makes a seed give the same plan on any machine")
	fs.DurationVar(&c.OrderWait, "order-wait", 2*time.Second, "how long event_ordering waits for a missing sequence number before it skips the gap")
	fs.DurationVar(&c.WSWriteLinger, "ws-write-linger", ws.DefaultWriteLinger, "a websocket getting messages faster than one this often holds each until this long after its last write and writes them together (0: every message at once)")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", 15*time.Second, "how long shutdown waits for in-flight work")
	fs.Usage = func() {
		fmt.Fprintln(w, "usage: fleethub serve [flags]\n\nEvery flag can also be set as FLEETHUB_<FLAG> (dashes as underscores).")
		fs.PrintDefaults()
	}
	return fs, c
}
