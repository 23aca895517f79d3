package emergency

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// Links signs and checks the share links of incidents: a link names one
// incident of one organization and environment and an expiry, signed
// with HMAC-SHA-256 under a server secret, so whoever holds it can read
// that incident's live location until it expires, and nothing else.
// Links are values only read after NewLinks: safe for concurrent use.
type Links struct {
	secret []byte
	ttl    time.Duration
}

// SharePath is where a share link is served; the token follows it.
const SharePath = "/v1/share/incidents/"

// NewLinks makes the link signer; ttl 0 means 24 hours.
func NewLinks(secret []byte, ttl time.Duration) (*Links, error) {
	if len(secret) < 16 {
		return nil, errors.New("emergency: a share link secret needs at least 16 bytes")
	}
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	return &Links{secret: secret, ttl: ttl}, nil
}

// Errors of a share link: one not signed here (or altered), and one past
// its expiry.
var (
	ErrShareNotFound = errors.New("emergency: share link not found")
	ErrShareExpired  = errors.New("emergency: share link expired")
)

var b64 = base64.RawURLEncoding

func (l *Links) sign(payload string) string {
	m := hmac.New(sha256.New, l.secret)
	m.Write([]byte(payload))
	return b64.EncodeToString(m.Sum(nil)[:16])
}

// token is the link's token for incident id of sc, expiring at exp.
func (l *Links) token(sc store.Scope, id string, exp time.Time) string {
	payload := strings.Join([]string{id, sc.Org, sc.Env, strconv.FormatInt(exp.Unix(), 10)}, "\n")
	return b64.EncodeToString([]byte(payload)) + "." + l.sign(payload)
}

// check returns what a token names, or ErrShareNotFound or
// ErrShareExpired.
func (l *Links) check(token string, now time.Time) (store.Scope, string, time.Time, error) {
	enc, sig, ok := strings.Cut(token, ".")
	raw, err := b64.DecodeString(enc)
	if !ok || err != nil || !hmac.Equal([]byte(sig), []byte(l.sign(string(raw)))) {
		return store.Scope{}, "", time.Time{}, ErrShareNotFound
	}
	parts := strings.Split(string(raw), "\n")
	if len(parts) != 4 {
		return store.Scope{}, "", time.Time{}, ErrShareNotFound
	}
	sec, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil {
		return store.Scope{}, "", time.Time{}, ErrShareNotFound
	}
	exp := time.Unix(sec, 0).UTC()
	if !now.Before(exp) {
		return store.Scope{}, "", exp, ErrShareExpired
	}
	return store.Scope{Org: parts[1], Env: parts[2]}, parts[0], exp, nil
}

// SharedPosition is the last position a vehicle reported on its trip.
type SharedPosition struct {
	Latitude  float64   `json:"latitude"`
	Longitude float64   `json:"longitude"`
	Timestamp time.Time `json:"timestamp"`
	SpeedKmh  *float64  `json:"speed_kmh"`
}

// SharedIncident is what a share link shows: the incident's place and
// state and the live position of its vehicle, nothing about people.
type SharedIncident struct {
	IncidentID      string          `json:"incident_id"`
	Status          string          `json:"status"`
	EventType       string          `json:"event_type"`
	SeverityLevel   string          `json:"severity_level"`
	Location        Location        `json:"location"`
	VehiclePosition *SharedPosition `json:"vehicle_position" doc:"the last point the incident's trip reported; null without a trip or a point"`
	ExpiresAt       time.Time       `json:"expires_at"`
}

// Shared reads the incident a share link names.
func (s *Incidents) Shared(ctx context.Context, token string) (SharedIncident, error) {
	if s.links == nil {
		return SharedIncident{}, ErrShareNotFound
	}
	sc, id, exp, err := s.links.check(token, s.now())
	if err != nil {
		return SharedIncident{}, err
	}
	in, _, err := s.load(ctx, sc, id)
	if errors.Is(err, ErrIncidentNotFound) {
		return SharedIncident{}, ErrShareNotFound
	}
	if err != nil {
		return SharedIncident{}, err
	}
	out := SharedIncident{IncidentID: in.IncidentID, Status: in.Status, EventType: in.EventType, SeverityLevel: in.SeverityLevel,
		Location: in.Location, ExpiresAt: exp}
	out.VehiclePosition, err = s.lastPosition(ctx, sc, in.TripID)
	return out, err
}

// lastPosition is the last point trip reported, nil when there is none.
func (s *Incidents) lastPosition(ctx context.Context, sc store.Scope, tripID string) (*SharedPosition, error) {
	if tripID == "" || s.trips == nil {
		return nil, nil
	}
	t, err := s.trips.GetTrip(ctx, sc, tripID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("emergency: the trip of a shared incident: %w", err)
	}
	var st struct {
		Last *struct {
			TS    int64    `json:"ts"`
			Lat   float64  `json:"lat"`
			Lon   float64  `json:"lon"`
			Speed *float64 `json:"speed"`
		} `json:"last"`
	}
	if err := json.Unmarshal(t.State, &st); err != nil {
		return nil, fmt.Errorf("emergency: the trip state of a shared incident: %w", err)
	}
	if st.Last == nil {
		return nil, nil
	}
	return &SharedPosition{Latitude: st.Last.Lat, Longitude: st.Last.Lon, Timestamp: time.UnixMilli(st.Last.TS).UTC(), SpeedKmh: st.Last.Speed}, nil
}
