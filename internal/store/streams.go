package store

import (
	"context"
	"time"
)

// Stream is a stored telemetry or event stream. Config is the normalized
// JSON of its settings and filters, opaque to the store.
type Stream struct {
	ID        string
	Org       string
	Env       string
	Kind      string // telemetry or events
	State     string // active, paused, stopped
	Config    []byte
	Secret    string // webhook signing secret(s) and the payload key of an encrypted stream, JSON; "" when it has neither
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
	StoppedAt time.Time // zero until stopped
}

// Streams stores streams.
type Streams interface {
	CreateStream(ctx context.Context, s Stream) error
	// GetStream returns a stream of the scope or ErrNotFound.
	GetStream(ctx context.Context, sc Scope, id string) (Stream, error)
	// UpdateStream writes s if the stored version is still prev.
	UpdateStream(ctx context.Context, s Stream, prev int64) error
	// ListStreams returns streams of every scope updated at or after since,
	// oldest update first.
	ListStreams(ctx context.Context, since time.Time) ([]Stream, error)
	// StreamVersions returns the identity and version of the streams of
	// every scope updated at or after since, without their settings.
	StreamVersions(ctx context.Context, since time.Time) ([]StreamVersion, error)
}

// StreamVersion is a stream's identity and version: what a copy of it
// needs to tell whether it is current.
type StreamVersion struct {
	ID, Org, Env string
	Version      int64
}
