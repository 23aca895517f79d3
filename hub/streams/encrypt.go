package streams

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/crypto/chacha20poly1305"
)

// EncryptionAlgorithm is the AEAD of streams started with
// stream_config.encryption: XChaCha20-Poly1305, whose 192-bit random
// nonces are safe for any number of messages under one key.
const EncryptionAlgorithm = "XChaCha20-Poly1305"

// EncryptionKeyPrefix starts every key id.
const EncryptionKeyPrefix = "ek_"

// EncryptionKey is a stream's payload key as it is stored (in the
// record's secrets, beside the webhook signing secret) and shown once in
// the start answer: Key is the base64 (standard) of 32 bytes.
type EncryptionKey struct {
	KeyID string `json:"key_id"`
	Key   string `json:"key"`
}

// newEncryptionKey makes a random key and its id.
func newEncryptionKey() (EncryptionKey, error) {
	var k [chacha20poly1305.KeySize]byte
	var id [8]byte
	if _, err := rand.Read(k[:]); err != nil {
		return EncryptionKey{}, err
	}
	if _, err := rand.Read(id[:]); err != nil {
		return EncryptionKey{}, err
	}
	return EncryptionKey{KeyID: EncryptionKeyPrefix + hex.EncodeToString(id[:]), Key: base64.StdEncoding.EncodeToString(k[:])}, nil
}

// Sealer encrypts the messages of one stream under its key, the stream id
// as additional data, and opens them again. A Sealer is immutable and
// safe for concurrent use.
type Sealer struct {
	keyID string
	aead  cipher.AEAD
	ad    []byte // the stream id
	head  []byte // {"encrypted":{"key_id":"ek_…","nonce":"
}

// NewSealer makes the sealer of a stream's key.
func NewSealer(streamID string, k EncryptionKey) (*Sealer, error) {
	key, err := base64.StdEncoding.DecodeString(k.Key)
	if err != nil || len(key) != chacha20poly1305.KeySize {
		return nil, fmt.Errorf("streams: encryption key %s of %s is not 32 bytes of base64", k.KeyID, streamID)
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, err
	}
	id, _ := json.Marshal(k.KeyID)
	head := append([]byte(`{"encrypted":{"key_id":`), id...)
	head = append(head, `,"nonce":"`...)
	return &Sealer{keyID: k.KeyID, aead: aead, ad: []byte(streamID), head: head}, nil
}

// KeyID is the id of the sealer's key.
func (s *Sealer) KeyID() string { return s.keyID }

// sealScratch is the working memory of Seal: the nonce and the
// ciphertext before its base64 (a nonce on the stack would escape
// through the AEAD's interface).
var sealScratch = sync.Pool{New: func() any { return new(sealBuf) }}

type sealBuf struct {
	nonce [chacha20poly1305.NonceSizeX]byte
	ct    []byte
}

// Seal returns the message that carries plain encrypted:
// {"encrypted":{"key_id","nonce","ciphertext"}}, nonce and ciphertext in
// standard base64, a fresh random nonce each call.
func (s *Sealer) Seal(plain []byte) []byte {
	buf := sealScratch.Get().(*sealBuf)
	_, _ = rand.Read(buf.nonce[:]) // crypto/rand.Read never fails
	ct := s.aead.Seal(buf.ct[:0], buf.nonce[:], plain, s.ad)
	enc := base64.StdEncoding
	out := make([]byte, 0, len(s.head)+enc.EncodedLen(len(buf.nonce))+len(`","ciphertext":"`)+enc.EncodedLen(len(ct))+len(`"}}`))
	out = append(out, s.head...)
	out = enc.AppendEncode(out, buf.nonce[:])
	out = append(out, `","ciphertext":"`...)
	out = enc.AppendEncode(out, ct)
	out = append(out, `"}}`...)
	if cap(ct) <= 64<<10 {
		buf.ct = ct
		sealScratch.Put(buf)
	}
	return out
}

// SealAll returns the sealed copies of data.
func (s *Sealer) SealAll(data [][]byte) [][]byte {
	out := make([][]byte, len(data))
	for i, d := range data {
		out[i] = s.Seal(d)
	}
	return out
}

// Sealed is the message form Seal writes.
type Sealed struct {
	Encrypted struct {
		KeyID      string `json:"key_id"`
		Nonce      []byte `json:"nonce"`
		Ciphertext []byte `json:"ciphertext"`
	} `json:"encrypted"`
}

// ErrNotSealed is a message that is not a sealed message of the key.
var ErrNotSealed = errors.New("streams: not a message sealed with this stream's key")

// Open returns the plain message of a sealed one; it fails on a message
// of another key or another stream, or one changed since it was sealed.
func (s *Sealer) Open(msg []byte) ([]byte, error) {
	if !bytes.HasPrefix(msg, s.head[:len(`{"encrypted":`)]) {
		return nil, ErrNotSealed
	}
	var m Sealed
	if err := json.Unmarshal(msg, &m); err != nil || m.Encrypted.KeyID != s.keyID || len(m.Encrypted.Nonce) != chacha20poly1305.NonceSizeX {
		return nil, ErrNotSealed
	}
	plain, err := s.aead.Open(nil, m.Encrypted.Nonce, m.Encrypted.Ciphertext, s.ad)
	if err != nil {
		return nil, ErrNotSealed
	}
	return plain, nil
}

// Encrypted reports whether a configuration asks for encryption.
func (c *Config) Encrypted() bool {
	switch {
	case c.Telemetry != nil:
		return c.Telemetry.StreamConfig != nil && c.Telemetry.StreamConfig.Encryption
	case c.Events != nil:
		return c.Events.StreamConfig != nil && c.Events.StreamConfig.Encryption
	}
	return false
}

// dropEncryption clears the encryption flag of a configuration stored
// with it before encryption was carried out (it has no key: its
// messages were never encrypted, and are not).
func (c *Config) dropEncryption() {
	switch {
	case c.Telemetry != nil && c.Telemetry.StreamConfig != nil:
		c.Telemetry.StreamConfig.Encryption = false
	case c.Events != nil && c.Events.StreamConfig != nil:
		c.Events.StreamConfig.Encryption = false
	}
}

// storedKey is the encryption key kept in a record's secrets, nil when
// it has none.
func storedKey(secret string) (*EncryptionKey, error) {
	if secret == "" {
		return nil, nil
	}
	var set SecretSet
	if err := json.Unmarshal([]byte(secret), &set); err != nil {
		return nil, err
	}
	return set.Encryption, nil
}
