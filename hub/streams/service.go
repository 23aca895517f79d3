package streams

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/netguard"
	"github.com/fleethub/fleethub/internal/store"
)

// ErrNotFound is a stream missing from the caller's scope.
var ErrNotFound = hub.ErrStreamNotFound

// TransitionError is a state change the stream does not allow.
type TransitionError struct{ From, To string }

func (e *TransitionError) Error() string {
	return fmt.Sprintf("streams: cannot move a %s stream to %s", e.From, e.To)
}

// LastOffsets reports a stream's newest log offset.
type LastOffsets interface {
	Last(ctx context.Context, streamID string) (int64, error)
}

// Service starts, stops, configures and reports streams.
type Service struct {
	reg          *Registry
	store        Store
	log          LastOffsets
	now          func() time.Time
	allowPrivate bool
	noNames      bool // no address data: location_names enrichment refused
	lease        Lease
	reap         reaper
}

// Option is a setting of NewService.
type Option func(*Service)

// AllowPrivateWebhooks accepts a webhook_url whose host is a loopback,
// private, link-local or otherwise refused address literal
// (--allow-private-webhooks); without it such a URL is a FieldError.
func AllowPrivateWebhooks(allow bool) Option { return func(s *Service) { s.allowPrivate = allow } }

// LocationNames says whether the server has the address data the
// location_names enrichment reads (--addresses); without it (false) a
// stream that asks for it is refused by name, as the enrichment would add
// nothing. The default is true.
func LocationNames(available bool) Option { return func(s *Service) { s.noNames = !available } }

// namesRefused is the FieldError of cfg's location_names enrichment when
// the server has no address data; nil otherwise.
func (s *Service) namesRefused(cfg *Config) *FieldError {
	if !s.noNames || cfg.Events == nil || cfg.Events.ProcessingRules == nil {
		return nil
	}
	for i, en := range cfg.Events.ProcessingRules.Enrichment {
		if en == "location_names" {
			return &FieldError{fmt.Sprintf("processing_rules.enrichment[%d]", i),
				"location_names needs the server's address data (serve --addresses), which this server has not loaded: it would add nothing"}
		}
	}
	return nil
}

// NewService makes the service. Options (rather than a Config) keep the
// existing callers unchanged.
func NewService(reg *Registry, st Store, log LastOffsets, opts ...Option) *Service {
	s := &Service{reg: reg, store: st, log: log, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// checkTarget refuses a webhook URL whose host is an address literal in a
// range delivery refuses (internal/netguard), unless private webhooks are
// allowed. Names are left to the connect-time check.
func (s *Service) checkTarget(info hub.StreamInfo) error {
	if s.allowPrivate || info.Delivery != "webhook" {
		return nil
	}
	p, err := url.Parse(info.WebhookURL)
	if err != nil {
		return &FieldError{"webhook_url", "must be an http or https URL"}
	}
	if ip, refused := netguard.LiteralRefused(p.Hostname()); refused {
		return &FieldError{"webhook_url", fmt.Sprintf("host %s is the address %s, in a loopback, private, link-local, metadata or otherwise reserved range; "+
			"refused unless the server runs with --allow-private-webhooks", p.Hostname(), ip)}
	}
	return nil
}

// Started is the result of Start.
type Started struct {
	Entry      *Entry
	Secret     string         // webhook signing secret, shown once
	Encryption *EncryptionKey // payload key of an encrypted stream, shown once
}

func newSecret() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b), nil
}

// SecretSet is the stored form of a stream's webhook secrets: the current
// one and, during rotation, the previous one until PreviousUntil.
type SecretSet struct {
	Current       string    `json:"current"`
	Previous      string    `json:"previous,omitempty"`
	PreviousUntil time.Time `json:"previous_until,omitempty"`
	// Encryption is the payload key of a stream started with
	// stream_config.encryption, kept with the signing secrets.
	Encryption *EncryptionKey `json:"encryption,omitempty"`
}

// parseStart decodes and checks a start body of kind: what Start stores
// and the stream it compiles to, before the checks that need the server
// (address data, the webhook target's address). A body that decodes but
// is refused returns its configuration with every problem found
// (FieldErrors when there are several); one that does not decode, the
// decoder's error alone (decoded is false).
func parseStart(kind string, body []byte) (Config, hub.StreamInfo, error) {
	cfg, info, _, err := parseStartBody(kind, body)
	return cfg, info, err
}

func parseStartBody(kind string, body []byte) (cfg Config, info hub.StreamInfo, decoded bool, err error) {
	switch kind {
	case hub.KindTelemetry:
		cfg.Telemetry = &TelemetryConfig{}
		err = decodeStrict(body, cfg.Telemetry)
	case hub.KindEvents:
		cfg.Events = &EventsConfig{}
		err = decodeStrict(body, cfg.Events)
	default:
		return Config{}, hub.StreamInfo{}, false, fmt.Errorf("streams: unknown kind %q", kind)
	}
	if err != nil {
		return Config{}, hub.StreamInfo{}, false, err
	}
	var p problems
	p.add(conditionValues(kind, body))
	p.add(emptyStrings(kind, body))
	cfg.webhookByURL()
	refused(&p, kind, &cfg)
	_, info, err = Compile(kind, &cfg)
	if err = p.addErr(err); err != nil {
		return Config{}, hub.StreamInfo{}, true, err
	}
	return cfg, info, true, p.err()
}

// Start validates body (the JSON start body) and stores an active stream.
// prior are problems the caller found in body before (identifiers sent
// blank): with any, nothing is stored, and the refusal names them beside
// the service's own.
func (s *Service) Start(ctx context.Context, org, env, kind string, body []byte, prior ...*FieldError) (Started, error) {
	cfg, info, decoded, err := parseStartBody(kind, body)
	if !decoded {
		return Started{}, err
	}
	var p problems
	for _, fe := range prior {
		p.add(fe)
	}
	if err := p.addErr(err); err != nil {
		return Started{}, err
	}
	p.add(s.namesRefused(&cfg))
	if err := p.err(); err != nil {
		return Started{}, err
	}
	if err := s.checkTarget(info); err != nil {
		return Started{}, err
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return Started{}, err
	}
	var idb [10]byte
	_, _ = rand.Read(idb[:])
	prefix := "tstr_"
	if kind == hub.KindEvents {
		prefix = "estr_"
	}
	now := apitime.Of(s.now())
	rec := store.Stream{ID: prefix + hex.EncodeToString(idb[:]), Org: org, Env: env, Kind: kind, State: hub.StateActive, Config: raw,
		Version: 1, CreatedAt: now, UpdatedAt: now}
	var out Started
	var set SecretSet
	if info.Delivery == "webhook" {
		if out.Secret, err = newSecret(); err != nil {
			return Started{}, err
		}
		set.Current = out.Secret
	}
	if cfg.Encrypted() {
		k, err := newEncryptionKey()
		if err != nil {
			return Started{}, err
		}
		set.Encryption, out.Encryption = &k, &k
	}
	if set.Current != "" || set.Encryption != nil {
		b, err := json.Marshal(set)
		if err != nil {
			return Started{}, fmt.Errorf("streams: signing secret: %w", err)
		}
		rec.Secret = string(b)
	}
	if err := s.store.CreateStream(ctx, rec); err != nil {
		return Started{}, err
	}
	s.reg.changed(ctx)
	out.Entry = s.reg.install(rec)
	return out, nil
}

// bodyError turns the error of decoding body into t into a field error,
// the field named by its full path (filters.vehicle_ids[2]).
func bodyError(err error, body []byte, t reflect.Type) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		f := jsonpath.Field(t, te.Field) // an embedded struct's fields by their JSON names
		if f == "" {
			f = "body"
		} else if p, ok := jsonpath.Indexed(body, f, te.Value); ok {
			f = p
		}
		return &TypeError{&FieldError{f, "must be " + jsonpath.KindOf(te.Type)}}
	}
	first := func(m map[string]string) (string, string, bool) {
		keys := slices.Sorted(maps.Keys(m))
		if len(keys) == 0 {
			return "", "", false
		}
		return keys[0], m[keys[0]], true
	}
	if strings.HasPrefix(err.Error(), "json: unknown field ") {
		if f, _, ok := first(jsonpath.Unknown(body, t)); ok {
			return &FieldError{f, jsonpath.UnknownRefusal}
		}
		return &FieldError{strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), jsonpath.UnknownRefusal}
	}
	if f, msg, ok := first(jsonpath.BadTimes(body, t)); ok {
		return &FieldError{f, msg}
	}
	return &FieldError{"body", "malformed JSON: " + err.Error()}
}

// Get returns a stream of the scope (stopped streams stay readable for
// the retention period).
func (s *Service) Get(ctx context.Context, org, env, kind, id string) (*Entry, error) {
	e, err := s.reg.Get(ctx, org, env, id)
	if err != nil {
		return nil, err
	}
	if e.Rec.Kind != kind {
		return nil, ErrNotFound
	}
	return e, nil
}

// update changes a stream with optimistic concurrency.
func (s *Service) update(ctx context.Context, org, env, kind, id string, f func(rec *store.Stream) error) (*Entry, error) {
	for attempt := 0; ; attempt++ {
		rec, err := s.store.GetStream(ctx, store.Scope{Org: org, Env: env}, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && rec.Kind != kind) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		if rec.State == hub.StateStopped && s.now().Sub(rec.StoppedAt) > s.reg.cfg.StoppedRetention {
			return nil, ErrNotFound
		}
		prev := rec.Version
		orig := rec
		if err := f(&rec); err != nil {
			return nil, err
		}
		if sameStream(orig, rec) {
			// nothing changed: no new version, updated_at stays
			return s.reg.install(orig), nil
		}
		rec.Version = prev + 1
		rec.UpdatedAt = apitime.Of(s.now())
		err = s.store.UpdateStream(ctx, rec, prev)
		if errors.Is(err, store.ErrConflict) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, err
		}
		s.reg.changed(ctx)
		return s.reg.install(rec), nil
	}
}

// sameStream reports whether b, a's record after a change, changes
// nothing a user can see.
func sameStream(a, b store.Stream) bool {
	return a.State == b.State && bytes.Equal(a.Config, b.Config) && a.Secret == b.Secret && a.StoppedAt.Equal(b.StoppedAt)
}

// Stop stops a stream; stopping a stopped stream is a conflict. An
// ephemeral stream's log is deleted with it.
func (s *Service) Stop(ctx context.Context, org, env, kind, id string) (*Entry, error) {
	e, err := s.update(ctx, org, env, kind, id, func(rec *store.Stream) error {
		if rec.State == hub.StateStopped {
			return &TransitionError{From: rec.State, To: hub.StateStopped}
		}
		rec.State = hub.StateStopped
		rec.StoppedAt = apitime.Of(s.now())
		return nil
	})
	if err != nil {
		return nil, err
	}
	if on, _ := e.Cfg.Ephemeral(); on {
		if err := s.deleteLog(ctx, id); err != nil {
			return e, err
		}
	}
	return e, nil
}

// Configured is the result of Configure.
type Configured struct {
	Entry  *Entry
	Secret string // the new webhook secret when rotated
}

// Configure merges patch (a JSON object with any start fields, "state"
// active|paused, and "rotate_secret") into a running stream. prior are
// problems the caller found in patch before (identifiers sent blank):
// with any, nothing changes, and the refusal names them beside the
// service's own.
func (s *Service) Configure(ctx context.Context, org, env, kind, id string, patch []byte, overlap time.Duration, prior ...*FieldError) (Configured, error) {
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil || p == nil {
		return Configured{}, &FieldError{"body", "must be a JSON object"}
	}
	rotate, isBool := p["rotate_secret"].(bool)
	if _, ok := p["rotate_secret"]; ok && !isBool {
		return Configured{}, &TypeError{&FieldError{"rotate_secret", "must be a boolean"}}
	}
	var pre problems
	for _, fe := range prior {
		pre.add(fe)
	}
	state, _ := p["state"].(string)
	if _, ok := p["state"]; ok && state != hub.StateActive && state != hub.StatePaused {
		pre.add(&FieldError{"state", enum.Refusal(hub.StateActive, hub.StatePaused)})
	}
	pre.add(emptyStrings(kind, patch))
	delete(p, "state")
	delete(p, "rotate_secret")
	dropDependents(kind, p)
	var out Configured
	e, err := s.update(ctx, org, env, kind, id, func(rec *store.Stream) error {
		if rec.State == hub.StateStopped {
			return &TransitionError{From: rec.State, To: "configured"}
		}
		var stored Config
		if err := json.Unmarshal(rec.Config, &stored); err != nil {
			return fmt.Errorf("streams: config of %s: %w", id, err)
		}
		key, err := storedKey(rec.Secret)
		if err != nil {
			return fmt.Errorf("streams: secrets of %s: %w", id, err)
		}
		if key == nil {
			stored.dropEncryption() // stored with the flag before it was carried out: never encrypted
		}
		hadNames := s.namesRefused(&stored) != nil
		pr := problems{list: slices.Clone(pre.list)}
		next, err := merged(kind, id, &stored, p)
		if err != nil {
			if len(pr.list) == 0 {
				return err // a wrong type stays a TypeError
			}
			if err := pr.addErr(err); err != nil {
				return err
			}
			return pr.err() // what the merged body's decoding refused: nothing more to check
		}
		if next.Encrypted() != (key != nil) {
			pr.add(errEncryptionFixed(key != nil))
		}
		if u, _ := p["webhook_url"].(string); u != "" || stored.deliversByWebhook() {
			// a URL the patch sends, or a webhook stream's own whose delivery
			// method the patch removed ("stream_config": null): still
			// webhook delivery, not a websocket stream keeping a webhook_url.
			// Not a URL a websocket stream kept from before.
			next.webhookByURL()
		}
		refused(&pr, kind, next)
		_, info, err := Compile(kind, next)
		if err := pr.addErr(err); err != nil {
			return err
		}
		// as a webhook URL kept from before, a location_names the stream
		// had (started where the addresses were loaded) is not judged again
		if fe := s.namesRefused(next); fe != nil && !hadNames {
			pr.add(fe)
		}
		if err := pr.err(); err != nil {
			return err
		}
		// A URL kept from before (a stream started with the flag) is not
		// judged again: changing other settings must not fail on it.
		if info.WebhookURL != stored.webhookURL() {
			if err := s.checkTarget(info); err != nil {
				return err
			}
		}
		if rec.Config, err = json.Marshal(next); err != nil {
			return fmt.Errorf("streams: config of %s: %w", id, err)
		}
		if state != "" {
			rec.State = state
		}
		out.Secret, err = s.secrets(rec, id, info.Delivery == "webhook", rotate, overlap)
		return err
	})
	if err != nil {
		return Configured{}, err
	}
	out.Entry = e
	return out, nil
}

// errEncryptionFixed refuses a configure that would turn a stream's
// encryption on or off: its key is made and shown once at start.
func errEncryptionFixed(on bool) *FieldError {
	return &FieldError{"stream_config.encryption", fmt.Sprintf("cannot be changed after the stream started (it is %t): "+
		"the key is made and shown once at start. Leave it out or send %t; start a new stream to change it", on, on)}
}

// merged is stored's configuration of kind with patch merged into it
// (objects deeply, null removing a key), decoded strictly.
func merged(kind, id string, stored *Config, patch map[string]any) (*Config, error) {
	var cur any = stored.Telemetry
	if kind == hub.KindEvents {
		cur = stored.Events
	}
	curJSON, err := json.Marshal(cur)
	if err != nil {
		return nil, fmt.Errorf("streams: config of %s: %w", id, err)
	}
	var base map[string]any
	if err := json.Unmarshal(curJSON, &base); err != nil {
		return nil, fmt.Errorf("streams: config of %s: %w", id, err)
	}
	if base == nil {
		base = map[string]any{}
	}
	raw, err := json.Marshal(mergeJSON(base, patch))
	if err != nil {
		return nil, fmt.Errorf("streams: config of %s: %w", id, err)
	}
	var next Config
	if kind == hub.KindEvents {
		next.Events = &EventsConfig{}
		err = decodeStrict(raw, next.Events)
	} else {
		next.Telemetry = &TelemetryConfig{}
		err = decodeStrict(raw, next.Telemetry)
	}
	if err != nil {
		return nil, err
	}
	if fe := conditionValues(kind, raw); fe != nil {
		return nil, fe
	}
	return &next, nil
}

// conditionValues refuses a custom condition sent without value: decoded,
// it would read as value null (the field is absent), a filter nobody
// asked for. body is a start body of kind, already decoded strictly.
func conditionValues(kind string, body []byte) *FieldError {
	type conds struct {
		CustomConditions []map[string]json.RawMessage `json:"custom_conditions"`
	}
	var b struct {
		Filters      *conds `json:"filters"`       // telemetry
		EventFilters *conds `json:"event_filters"` // events
	}
	if json.Unmarshal(body, &b) != nil {
		return nil // the strict decoding has answered
	}
	c, path := b.Filters, "filters.custom_conditions"
	if kind == hub.KindEvents {
		c, path = b.EventFilters, "event_filters.custom_conditions"
	}
	if c == nil {
		return nil
	}
	for i, cd := range c.CustomConditions {
		if _, ok := cd["value"]; !ok {
			return &FieldError{fmt.Sprintf("%s[%d].value", path, i), "is required (null matches a message without the field)"}
		}
	}
	return nil
}

// dropDependents removes from a configure patch p the stored setting that
// only applies beside a value the patch turns away from, unless p names
// it: custom_interval when stream_config.frequency becomes another than
// custom, idle_timeout_seconds when ephemeral becomes false or null,
// webhook_url when the delivery method becomes websocket. The
// merge would keep the stored one, and the refusal would blame a setting
// the client did not send ("applies to frequency custom only").
func dropDependents(kind string, p map[string]any) {
	if v, ok := p["ephemeral"]; ok && v != true {
		if _, named := p["idle_timeout_seconds"]; !named {
			p["idle_timeout_seconds"] = nil
		}
	}
	sc, _ := p["stream_config"].(map[string]any)
	delivery := sc["delivery_method"]
	if kind == hub.KindTelemetry {
		delivery = p["delivery_method"]
	}
	if delivery == "websocket" {
		if _, named := p["webhook_url"]; !named {
			p["webhook_url"] = nil
		}
	}
	if kind != hub.KindTelemetry {
		return
	}
	if f, ok := sc["frequency"]; ok && f != "custom" {
		if _, named := sc["custom_interval"]; !named {
			sc["custom_interval"] = nil
		}
	}
}

// emptyStrings refuses a webhook_url or a time_filters.timezone sent as
// "": decoded, either would read as left out (a websocket stream, UTC),
// a setting nobody asked for, where one of white space is refused. body
// is a start body or a configure patch; null still removes at configure.
func emptyStrings(kind string, body []byte) *FieldError {
	var b struct {
		WebhookURL   *string `json:"webhook_url"`
		EventFilters *struct {
			TimeFilters *struct {
				Timezone *string `json:"timezone"`
			} `json:"time_filters"`
		} `json:"event_filters"`
	}
	if json.Unmarshal(body, &b) != nil {
		return nil // the strict decoding answers a body of the wrong shape
	}
	if b.WebhookURL != nil && *b.WebhookURL == "" {
		return &FieldError{"webhook_url", "must be an http or https URL (leave it out, or null at configure, for websocket delivery)"}
	}
	if f := b.EventFilters; kind == hub.KindEvents && f != nil && f.TimeFilters != nil && f.TimeFilters.Timezone != nil && *f.TimeFilters.Timezone == "" {
		return &FieldError{"event_filters.time_filters.timezone", `must be an IANA time zone name such as "Europe/Berlin" (leave it out for UTC)`}
	}
	return nil
}

// secrets keeps rec's signing secrets: a webhook stream without one, or
// asked to rotate, gets a new one (returned, the old one valid for
// overlap); rotating a stream that is not a webhook stream is refused.
func (s *Service) secrets(rec *store.Stream, id string, webhook, rotate bool, overlap time.Duration) (string, error) {
	var set SecretSet
	if rec.Secret != "" {
		if err := json.Unmarshal([]byte(rec.Secret), &set); err != nil {
			return "", fmt.Errorf("streams: signing secrets of %s: %w", id, err)
		}
	}
	var fresh string
	switch {
	case webhook && (set.Current == "" || rotate):
		sec, err := newSecret()
		if err != nil {
			return "", err
		}
		if set.Current != "" {
			set.Previous, set.PreviousUntil = set.Current, s.now().Add(overlap).UTC()
		}
		set.Current, fresh = sec, sec
	case rotate:
		return "", &FieldError{"rotate_secret", "only webhook streams have a signing secret"}
	}
	if set.Current != "" {
		b, err := json.Marshal(set)
		if err != nil {
			return "", fmt.Errorf("streams: signing secrets of %s: %w", id, err)
		}
		rec.Secret = string(b)
	}
	return fresh, nil
}

// Status is a stream's live figures on this node.
type Status struct {
	Entry         *Entry
	LastOffset    int64
	Counters      map[string]int64
	Connected     int64
	LastMatchAt   time.Time
	PipelineLagMS int64
}

// Status reports a stream.
func (s *Service) Status(ctx context.Context, org, env, kind, id string) (Status, error) {
	e, err := s.Get(ctx, org, env, kind, id)
	if err != nil {
		return Status{}, err
	}
	return s.status(ctx, e)
}

func (s *Service) status(ctx context.Context, e *Entry) (Status, error) {
	var err error
	st := Status{Entry: e, PipelineLagMS: e.lagMS.Load()}
	st.Counters, st.Connected = s.reg.totals(ctx, e)
	if ms := e.lastMatch.Load(); ms > 0 {
		st.LastMatchAt = time.UnixMilli(ms).UTC()
	}
	if s.log != nil {
		if st.LastOffset, err = s.log.Last(ctx, e.Rec.ID); err != nil {
			return st, err
		}
	}
	return st, nil
}

// LogReader reads a stream's retained log.
type LogReader interface {
	Read(ctx context.Context, streamID string, from int64, max int) ([]hub.Entry, error)
	Last(ctx context.Context, streamID string) (int64, error)
}

// MaxCorrelationScan bounds how many retained messages a correlation
// lookup reads.
const MaxCorrelationScan = 100_000

// Correlated returns the retained messages of an event stream that share
// a correlation id, in offset order (at most limit). An encrypted
// stream's messages are opened to be searched and returned as stored,
// encrypted.
func (s *Service) Correlated(ctx context.Context, org, env, id, correlationID string, limit int) ([]hub.Entry, error) {
	st, err := s.Get(ctx, org, env, hub.KindEvents, id)
	if err != nil {
		return nil, err
	}
	lr, ok := s.log.(LogReader)
	if !ok {
		return nil, fmt.Errorf("streams: the stream log cannot be read")
	}
	last, err := lr.Last(ctx, id)
	if err != nil {
		return nil, err
	}
	key, _ := json.Marshal(correlationID)
	needle := append([]byte(`"correlation_id":`), key...)
	var out []hub.Entry
	from := max(int64(1), last-MaxCorrelationScan+1)
	for from <= last && len(out) < limit {
		ents, err := lr.Read(ctx, id, from, 1000)
		if err != nil {
			return nil, err
		}
		if len(ents) == 0 {
			break
		}
		for _, e := range ents {
			plain := e.Data
			if st.Sealer != nil {
				// searched in the plain message, answered as stored
				if plain, err = st.Sealer.Open(e.Data); err != nil {
					continue
				}
			}
			if bytes.Contains(plain, needle) {
				out = append(out, e)
				if len(out) == limit {
					break
				}
			}
		}
		from = ents[len(ents)-1].Offset + 1
	}
	return out, nil
}

// deliversByWebhook reports whether the configuration names webhook
// delivery (a stored webhook stream's always does: start names it).
func (c Config) deliversByWebhook() bool {
	switch {
	case c.Telemetry != nil:
		return c.Telemetry.DeliveryMethod == "webhook"
	case c.Events != nil:
		return c.Events.StreamConfig != nil && c.Events.StreamConfig.DeliveryMethod == "webhook"
	}
	return false
}

// webhookURL is the configuration's webhook_url, "" if none.
func (c Config) webhookURL() string {
	switch {
	case c.Telemetry != nil:
		return c.Telemetry.WebhookURL
	case c.Events != nil:
		return c.Events.WebhookURL
	}
	return ""
}
