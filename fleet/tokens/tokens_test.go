package tokens_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/tokens"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/testdb"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// clock is a hand-moved clock: add runs the functions AfterFunc set
// that fall due.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*timer]struct{}
}

type timer struct {
	at time.Time
	f  func()
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timers == nil {
		c.timers = map[*timer]struct{}{}
	}
	tm := &timer{at: c.now.Add(d), f: f}
	c.timers[tm] = struct{}{}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.timers[tm]
		delete(c.timers, tm)
		return ok
	}
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	for tm := range c.timers {
		if !tm.at.After(c.now) {
			due = append(due, tm.f)
			delete(c.timers, tm)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

var secret = []byte("0123456789abcdef0123456789abcdef")

func newService(t *testing.T, st store.Backend, clk *clock) *tokens.Service {
	t.Helper()
	s, err := tokens.New(tokens.Config{Now: clk.Now, AfterFunc: clk.AfterFunc}, secret, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// addStream stores a stream of id in the scope of org and env.
func addStream(t testing.TB, st store.Backend, org, env, id string) {
	t.Helper()
	now := time.Unix(1_800_000_000, 0).UTC()
	if err := st.CreateStream(t.Context(), store.Stream{ID: id, Org: org, Env: env, Kind: "events", State: "active", Config: []byte("{}"),
		Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

var key = &apikey.Principal{KeyID: "key_1", Org: "org-a", Env: "test", Permissions: []string{"streams:read"}, Rate: 100, Burst: 200}

func TestVerifyExpiryAlgorithmAndRevocation(t *testing.T) {
	st := testdb.SQLite(t)
	addStream(t, st, "org-a", "test", "str_a")
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	s := newService(t, st, clk)
	ctx := context.Background()
	m, err := s.Mint(ctx, key, tokens.MintRequest{Scopes: []string{"streams:read"}, StreamIDs: []string{"str_a"}, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Verify(ctx, m.Token)
	if err != nil || p.Org != "org-a" || p.KeyID != "key_1" || p.Rate != 100 || !p.Token.AllowsStream("str_a") || p.Token.AllowsStream("str_b") || p.Token.HasScope("feed:read") {
		t.Fatalf("Verify = %+v %+v, %v", p, p.Token, err)
	}
	// another algorithm in the header, even with a valid HMAC under it, is refused
	parts := strings.Split(m.Token, ".")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	if _, err := s.Verify(ctx, none); !errors.Is(err, tokens.ErrInvalid) {
		t.Errorf("alg none: %v", err)
	}
	// another server's secret
	other, _ := tokens.New(tokens.Config{Now: clk.Now}, []byte("another secret of thirty-two bytes!!"), st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := other.Verify(ctx, m.Token); !errors.Is(err, tokens.ErrInvalid) {
		t.Errorf("another secret: %v", err)
	}
	// revoked: this service at once, another node's after its refresh
	peer := newService(t, st, clk)
	if _, err := peer.Verify(ctx, m.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Revoke(ctx, store.Scope{Org: "org-a", Env: "test"}, p.Token.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(ctx, m.Token); !errors.Is(err, tokens.ErrRevoked) {
		t.Errorf("revoked here: %v", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- peer.Run(runCtx) }() // its first pass reads the list
	defer func() { cancel(); <-done }()
	if !waitfor.Poll(10*time.Second, func() bool {
		_, err := peer.Verify(ctx, m.Token)
		return errors.Is(err, tokens.ErrRevoked)
	}) {
		t.Fatal("the other node never saw the revocation")
	}
	// expiry
	m2, _ := s.Mint(ctx, key, tokens.MintRequest{Scopes: []string{"feed:read"}, TTL: time.Minute})
	clk.add(time.Minute)
	if _, err := s.Verify(ctx, m2.Token); !errors.Is(err, tokens.ErrExpired) {
		t.Errorf("expired: %v", err)
	}
}

func TestMintRefusesByField(t *testing.T) {
	st := testdb.SQLite(t)
	addStream(t, st, "org-a", "test", strings.Repeat("é", 200))
	s := newService(t, st, &clock{now: time.Unix(1_800_000_000, 0)})
	for _, tc := range []struct {
		r     tokens.MintRequest
		field string
	}{
		{tokens.MintRequest{Scopes: []string{"feed:read"}, TTL: 25 * time.Hour}, "expires_in_seconds"},
		{tokens.MintRequest{}, "scopes"},
		{tokens.MintRequest{Scopes: []string{"all"}}, "scopes[0]"},
		{tokens.MintRequest{Scopes: []string{"feed:read"}, StreamIDs: []string{"a"}}, "stream_ids"},
		{tokens.MintRequest{Scopes: []string{"streams:read"}, StreamIDs: []string{""}}, "stream_ids[0]"},
	} {
		_, err := s.Mint(context.Background(), key, tc.r)
		var fe *tokens.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want a refusal of %s", tc.r, err, tc.field)
		}
	}
	// a stream id is 1 to 200 characters, not bytes
	if _, err := s.Mint(context.Background(), key, tokens.MintRequest{Scopes: []string{"streams:read"}, StreamIDs: []string{strings.Repeat("é", 200)}}); err != nil {
		t.Errorf("a stream id of 200 characters: %v", err)
	}
	var fe *tokens.FieldError
	if _, err := s.Mint(context.Background(), key, tokens.MintRequest{Scopes: []string{"streams:read"}, StreamIDs: []string{strings.Repeat("é", 201)}}); !errors.As(err, &fe) || fe.Field != "stream_ids[0]" {
		t.Errorf("a stream id of 201 characters: %v, want a refusal of stream_ids[0]", err)
	}
	var pe *tokens.PermissionError
	if _, err := s.Mint(context.Background(), key, tokens.MintRequest{Scopes: []string{"alerts:acknowledge"}}); !errors.As(err, &pe) {
		t.Errorf("a scope beyond the key: %v", err)
	}
}

// A token's Life ends at its expiry on the service's clock, at once when
// it is revoked on this node, and after the refresh that reads the
// revocation on another; every request of one token shares it.
func TestLifeEndsAtExpiryAndRevocation(t *testing.T) {
	st := testdb.SQLite(t)
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	s := newService(t, st, clk)
	ctx := context.Background()
	scope := store.Scope{Org: "org-a", Env: "test"}
	verify := func(tok string) *apikey.TokenGrant {
		t.Helper()
		p, err := s.Verify(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		if p.Token.Life == nil {
			t.Fatal("a verified token has no Life")
		}
		return p.Token
	}
	short, _ := s.Mint(ctx, key, tokens.MintRequest{Scopes: []string{"feed:read"}, TTL: time.Minute})
	g := verify(short.Token)
	if again := verify(short.Token); again.Life != g.Life {
		t.Error("two requests of one token got two Lives")
	}
	clk.add(59 * time.Second)
	if g.Life.Err() != nil {
		t.Fatal("the Life ended before the token's expiry")
	}
	clk.add(time.Second)
	if !errors.Is(context.Cause(g.Life), tokens.ErrExpired) {
		t.Fatalf("at expiry: cause %v", context.Cause(g.Life))
	}

	long, _ := s.Mint(ctx, key, tokens.MintRequest{Scopes: []string{"feed:read"}, TTL: time.Hour})
	g = verify(long.Token)
	if _, err := s.Revoke(ctx, scope, g.ID); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(context.Cause(g.Life), tokens.ErrRevoked) {
		t.Fatalf("revoked here: cause %v", context.Cause(g.Life))
	}

	// revoked on another node: seen at this node's next refresh
	third, _ := s.Mint(ctx, key, tokens.MintRequest{Scopes: []string{"feed:read"}, TTL: time.Hour})
	g = verify(third.Token)
	peer := newService(t, st, clk)
	if _, err := peer.Revoke(ctx, scope, g.ID); err != nil {
		t.Fatal(err)
	}
	if g.Life.Err() != nil {
		t.Fatal("ended before this node read the revocation")
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- s.Run(runCtx) }() // its first pass reads the list
	defer func() { cancel(); <-done }()
	select {
	case <-g.Life.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the revocation on another node never ended the Life")
	}
	if !errors.Is(context.Cause(g.Life), tokens.ErrRevoked) {
		t.Fatalf("revoked elsewhere: cause %v", context.Cause(g.Life))
	}
}

// TestMintRefusesStreamsNotOfTheScope: stream_ids name streams of the
// minting key's organization and environment. One that does not exist,
// and one of another organization or environment, is refused by its
// index in the same words, so that the refusal says nothing of other
// organizations' streams; no token is minted.
func TestMintRefusesStreamsNotOfTheScope(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		st := open(t)
		addStream(t, st, "org-a", "test", "str_mine")
		addStream(t, st, "org-b", "test", "str_theirs")
		addStream(t, st, "org-a", "live", "str_live")
		s := newService(t, st, &clock{now: time.Unix(1_800_000_000, 0)})
		ctx := context.Background()
		var msgs []string
		for _, other := range []string{"str_none", "str_theirs", "str_live"} {
			_, err := s.Mint(ctx, key, tokens.MintRequest{Scopes: []string{"streams:read"}, StreamIDs: []string{"str_mine", other}})
			var fe *tokens.FieldError
			if !errors.As(err, &fe) || fe.Field != "stream_ids[1]" {
				t.Fatalf("stream_ids [str_mine %s]: %v, want a refusal of stream_ids[1]", other, err)
			}
			msgs = append(msgs, fe.Msg)
		}
		if msgs[0] != msgs[1] || msgs[0] != msgs[2] {
			t.Errorf("refusals differ, telling other scopes' streams apart: %q", msgs)
		}
		m, err := s.Mint(ctx, key, tokens.MintRequest{Scopes: []string{"streams:read"}, StreamIDs: []string{"str_mine"}})
		if err != nil || !slices.Equal(m.Grant.StreamIDs, []string{"str_mine"}) {
			t.Fatalf("a stream of the key's scope: %+v, %v", m.Grant, err)
		}
	})
}
