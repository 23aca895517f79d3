package streams_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedlog"
	"github.com/fleethub/fleethub/hub/streams"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

type encFixture struct {
	log *embedlog.Log
	st  *sqlite.Store
	svc *streams.Service
	reg *streams.Registry
}

func newEncFixture(t *testing.T) *encFixture {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg := streams.NewRegistry(streams.RegistryConfig{}, st, slog.New(slog.DiscardHandler))
	if err := reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	l := embedlog.New(embedlog.Config{})
	t.Cleanup(func() { l.Close() })
	return &encFixture{log: l, st: st, svc: streams.NewService(reg, st, l, streams.AllowPrivateWebhooks(true)), reg: reg}
}

// openWith opens a sealed message as a receiver does, with the key of the
// start answer and the stream id.
func openWith(key, streamID string, msg []byte) ([]byte, error) {
	var m struct {
		Encrypted struct {
			KeyID      string `json:"key_id"`
			Nonce      string `json:"nonce"`
			Ciphertext string `json:"ciphertext"`
		} `json:"encrypted"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, err
	}
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return nil, err
	}
	nonce, err := base64.StdEncoding.DecodeString(m.Encrypted.Nonce)
	if err != nil {
		return nil, err
	}
	ct, err := base64.StdEncoding.DecodeString(m.Encrypted.Ciphertext)
	if err != nil {
		return nil, err
	}
	aead, err := chacha20poly1305.NewX(k)
	if err != nil {
		return nil, err
	}
	return aead.Open(nil, nonce, ct, []byte(streamID))
}

// TestSealedMessagesOpenWithTheStartKey: a message sealed for an
// encrypted stream opens with the key the start answer showed and the
// stream's id, and with nothing else: not changed, not under another
// stream's id, not with another stream's key.
func TestSealedMessagesOpenWithTheStartKey(t *testing.T) {
	f := newEncFixture(t)
	ctx := context.Background()
	a, err := f.svc.Start(ctx, "org", "live", hub.KindEvents, []byte(`{"stream_config": {"encryption": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.svc.Start(ctx, "org", "live", hub.KindEvents, []byte(`{"stream_config": {"encryption": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	k := a.Encryption
	if k == nil || !strings.HasPrefix(k.KeyID, "ek_") || len(k.KeyID) != 3+16 || a.Entry.Sealer == nil || a.Entry.Sealer.KeyID() != k.KeyID {
		t.Fatalf("start answer's key %+v, sealer %v", k, a.Entry.Sealer)
	}
	if raw, _ := base64.StdEncoding.DecodeString(k.Key); len(raw) != 32 {
		t.Fatalf("key %q is not 32 bytes of base64", k.Key)
	}
	if b.Encryption.Key == k.Key || b.Encryption.KeyID == k.KeyID {
		t.Fatal("two streams got one key")
	}
	plain := []byte(`{"event_id":"e-1","event_type":"harsh_braking","event_data":{"g":0.61}}`)
	sealed := a.Entry.Sealer.Seal(plain)
	if bytes.Contains(sealed, []byte("harsh_braking")) {
		t.Fatalf("sealed message holds the plain text: %s", sealed)
	}
	if again := a.Entry.Sealer.Seal(plain); bytes.Equal(again, sealed) {
		t.Fatal("two seals of one message are equal: the nonce is not fresh")
	}
	got, err := openWith(k.Key, a.Entry.Rec.ID, sealed)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("open with the start key: %s, %v", got, err)
	}
	if got, err := a.Entry.Sealer.Open(sealed); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("the hub's open: %s, %v", got, err)
	}
	if _, err := openWith(k.Key, b.Entry.Rec.ID, sealed); err == nil {
		t.Error("opened under another stream's id")
	}
	if _, err := openWith(b.Encryption.Key, a.Entry.Rec.ID, sealed); err == nil {
		t.Error("opened with another stream's key")
	}
	if _, err := b.Entry.Sealer.Open(sealed); !errors.Is(err, streams.ErrNotSealed) {
		t.Errorf("another stream's sealer opened it: %v", err)
	}
	var m map[string]map[string]string
	if err := json.Unmarshal(sealed, &m); err != nil || m["encrypted"]["key_id"] != k.KeyID {
		t.Fatalf("sealed form %s: %v", sealed, err)
	}
	ct, _ := base64.StdEncoding.DecodeString(m["encrypted"]["ciphertext"])
	ct[3] ^= 1
	m["encrypted"]["ciphertext"] = base64.StdEncoding.EncodeToString(ct)
	tampered, _ := json.Marshal(m)
	if _, err := openWith(k.Key, a.Entry.Rec.ID, tampered); err == nil {
		t.Error("a changed ciphertext opened")
	}
	if _, err := a.Entry.Sealer.Open(tampered); err == nil {
		t.Error("the hub opened a changed ciphertext")
	}
}

// TestEncryptionKeyIsSharedThroughTheStore: the key lives with the
// stream's record, so a registry loading the store afterwards (another
// node, or this one after a restart) seals and opens with the same key;
// the key is not part of the configuration, and rotating a webhook
// secret keeps it.
func TestEncryptionKeyIsSharedThroughTheStore(t *testing.T) {
	f := newEncFixture(t)
	ctx := context.Background()
	s, err := f.svc.Start(ctx, "org", "live", hub.KindTelemetry, []byte(`{"delivery_method": "webhook", "webhook_url": "http://127.0.0.1:9/h", "stream_config": {"encryption": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	id := s.Entry.Rec.ID
	if s.Secret == "" || s.Encryption == nil {
		t.Fatalf("start: secret %q, key %v", s.Secret, s.Encryption)
	}
	if bytes.Contains(s.Entry.Rec.Config, []byte(s.Encryption.Key)) {
		t.Fatal("the key is in the configuration")
	}
	if _, err := f.svc.Configure(ctx, "org", "live", hub.KindTelemetry, id, []byte(`{"rotate_secret": true}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	sealed := s.Entry.Sealer.Seal([]byte(`{"vehicle_id":"v1"}`))
	other := streams.NewRegistry(streams.RegistryConfig{}, f.st, slog.New(slog.DiscardHandler))
	if err := other.Load(ctx); err != nil {
		t.Fatal(err)
	}
	e := other.ByID(id)
	if e == nil || e.Sealer == nil || e.Sealer.KeyID() != s.Encryption.KeyID {
		t.Fatalf("another registry's entry %+v", e)
	}
	if got, err := e.Sealer.Open(sealed); err != nil || string(got) != `{"vehicle_id":"v1"}` {
		t.Fatalf("another registry opens %s, %v", got, err)
	}
	if got, err := openWith(s.Encryption.Key, id, e.Sealer.Seal([]byte(`{}`))); err != nil || string(got) != `{}` {
		t.Fatalf("another registry's seal opens with the start key: %s, %v", got, err)
	}
}

// TestEncryptionIsFixedAtStart: configure cannot turn encryption on or
// off; sending the value the stream has is accepted.
func TestEncryptionIsFixedAtStart(t *testing.T) {
	f := newEncFixture(t)
	ctx := context.Background()
	enc, err := f.svc.Start(ctx, "org", "live", hub.KindEvents, []byte(`{"stream_config": {"encryption": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := f.svc.Start(ctx, "org", "live", hub.KindEvents, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, patch string
		refused   bool
	}{
		{enc.Entry.Rec.ID, `{"stream_config": {"encryption": false}}`, true},
		{enc.Entry.Rec.ID, `{"stream_config": {"encryption": null}}`, true},
		{enc.Entry.Rec.ID, `{"stream_config": null}`, true},
		{enc.Entry.Rec.ID, `{"stream_config": {"encryption": true, "batch_events": true}}`, false},
		{enc.Entry.Rec.ID, `{"state": "paused"}`, false},
		{plain.Entry.Rec.ID, `{"stream_config": {"encryption": true}}`, true},
		{plain.Entry.Rec.ID, `{"stream_config": {"encryption": false}}`, false},
	} {
		res, err := f.svc.Configure(ctx, "org", "live", hub.KindEvents, c.id, []byte(c.patch), time.Hour)
		var fe *streams.FieldError
		switch {
		case c.refused && (!errors.As(err, &fe) || fe.Field != "stream_config.encryption"):
			t.Errorf("%s on %s: %v, want refused naming stream_config.encryption", c.patch, c.id, err)
		case !c.refused && err != nil:
			t.Errorf("%s on %s: %v", c.patch, c.id, err)
		case !c.refused && (res.Entry.Sealer != nil) != (c.id == enc.Entry.Rec.ID):
			t.Errorf("%s on %s: sealer %v", c.patch, c.id, res.Entry.Sealer)
		}
	}
	if e := f.reg.ByID(enc.Entry.Rec.ID); e.Sealer == nil || e.Sealer.KeyID() != enc.Encryption.KeyID {
		t.Errorf("the key changed: %v", e.Sealer)
	}
}

// TestStoredFlagWithoutKey: a stream stored with encryption true before
// the hub carried it out has no key: it loads and delivers its messages
// as they are, and its configuration says false.
func TestStoredFlagWithoutKey(t *testing.T) {
	f := newEncFixture(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	rec := store.Stream{ID: "estr_00000000000000000001", Org: "org", Env: "live", Kind: hub.KindEvents, State: hub.StateActive,
		Config: []byte(`{"events":{"stream_config":{"encryption":true}}}`), Version: 1, CreatedAt: now, UpdatedAt: now}
	if err := f.st.CreateStream(ctx, rec); err != nil {
		t.Fatal(err)
	}
	e, err := f.svc.Get(ctx, "org", "live", hub.KindEvents, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if e.Sealer != nil || e.Cfg.Encrypted() {
		t.Fatalf("stored flag without a key: sealer %v, encrypted %v", e.Sealer, e.Cfg.Encrypted())
	}
	if _, err := f.svc.Configure(ctx, "org", "live", hub.KindEvents, rec.ID, []byte(`{"state": "paused"}`), time.Hour); err != nil {
		t.Fatalf("configure another field: %v", err)
	}
	var fe *streams.FieldError
	if _, err := f.svc.Configure(ctx, "org", "live", hub.KindEvents, rec.ID, []byte(`{"stream_config": {"encryption": true}}`), time.Hour); !errors.As(err, &fe) || fe.Field != "stream_config.encryption" {
		t.Fatalf("turning it on: %v", err)
	}
}

// TestCorrelatedOpensEncryptedMessages: the correlation lookup of an
// encrypted stream finds the messages by their plain text and answers
// them as the stream delivers them, encrypted.
func TestCorrelatedOpensEncryptedMessages(t *testing.T) {
	f := newEncFixture(t)
	ctx := context.Background()
	s, err := f.svc.Start(ctx, "org", "live", hub.KindEvents, []byte(`{"stream_config": {"encryption": true}, "processing_rules": {"correlation_enabled": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	id, sl := s.Entry.Rec.ID, s.Entry.Sealer
	var data [][]byte
	for i, c := range []string{"trip-1", "trip-2", "trip-1"} {
		data = append(data, sl.Seal([]byte(fmt.Sprintf(`{"event_id":"e%d","metadata":{"correlation_id":%q}}`, i, c))))
	}
	if _, err := f.log.Append(ctx, id, data); err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.Correlated(ctx, "org", "live", id, "trip-1", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Offset != 1 || got[1].Offset != 3 || !bytes.Equal(got[0].Data, data[0]) || !bytes.Equal(got[1].Data, data[2]) {
		t.Fatalf("correlated %+v, want offsets 1 and 3 as logged", got)
	}
}

// BenchmarkSeal: sealing one event message of 566 bytes, what an
// encrypted stream adds to each message it takes.
func BenchmarkSeal(b *testing.B) {
	k := streams.EncryptionKey{KeyID: "ek_0123456789abcdef", Key: base64.StdEncoding.EncodeToString(make([]byte, 32))}
	s, err := streams.NewSealer("estr_00000000000000000001", k)
	if err != nil {
		b.Fatal(err)
	}
	msg := bytes.Repeat([]byte("x"), 566)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		s.Seal(msg)
	}
}
