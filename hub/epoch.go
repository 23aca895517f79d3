package hub

import (
	"context"
	"fmt"
)

// An epoch names a stream's history (Log.Epoch). A client's position is
// an offset and the epoch it was read in: of another epoch, the offset
// means nothing in the stream's current history, and delivery starts
// again from the oldest retained offset, with a history_lost notice,
// never from the offset + 1. Every reader of the stream logs (the
// websocket, a registered stream's event stream) resumes through
// Resume and FirstAvailable, and takes a client's epoch by ValidEpoch.

// MaxEpochLen bounds an epoch sent by a client: an epoch is a token of
// at most 64 characters.
const MaxEpochLen = 64

// EpochRefusal is the message for an epoch that ValidEpoch refuses.
const EpochRefusal = "must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -"

// HistoryLostMessage is what a history_lost notice tells the client.
const HistoryLostMessage = "the stream's history was lost (its epoch changed): offsets of another epoch are void; delivery starts again at first_available"

// ValidEpoch reports whether s is an epoch a client may send: 1 to
// MaxEpochLen characters of A-Z, a-z, 0-9, _ and -.
func ValidEpoch(s string) bool {
	if len(s) == 0 || len(s) > MaxEpochLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Position is where delivery of a stream goes on: Next is the first
// offset to deliver, Epoch the stream's history it belongs to, and Lost
// says the client's position was of another epoch (tell it history_lost
// with first_available Next).
type Position struct {
	Next  int64
	Epoch string
	Lost  bool
}

// Resume is where delivery of stream id goes on for a client at offset
// after (nil: none, live from the next offset appended) read in history
// epoch ("" when the client names none). Of the stream's current epoch,
// or of none, it is after + 1, at most the newest offset + 1 (a position
// past the head is moved back to it: the client gets duplicates rather
// than a gap); of another, the oldest retained offset, Lost. The epoch
// is read first: a history lost after that is for the reader's next read
// to notice (Epoch again, then FirstAvailable).
func Resume(ctx context.Context, log Log, id string, after *int64, epoch string) (Position, error) {
	cur, err := log.Epoch(ctx, id)
	if err != nil {
		return Position{}, fmt.Errorf("hub: epoch of stream %s: %w", id, err)
	}
	last, err := log.Last(ctx, id)
	if err != nil {
		return Position{}, fmt.Errorf("hub: last offset of stream %s: %w", id, err)
	}
	if epoch != "" && epoch != cur {
		first, err := firstAvailable(ctx, log, id, last)
		return Position{Next: first, Epoch: cur, Lost: true}, err
	}
	next := last
	if after != nil {
		next = min(*after, last)
	}
	return Position{Next: next + 1, Epoch: cur}, nil
}

// FirstAvailable is the oldest offset stream id retains, or the newest
// + 1 when it retains nothing: where a reader whose history was lost
// goes on.
func FirstAvailable(ctx context.Context, log Log, id string) (int64, error) {
	last, err := log.Last(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("hub: last offset of stream %s: %w", id, err)
	}
	return firstAvailable(ctx, log, id, last)
}

func firstAvailable(ctx context.Context, log Log, id string, last int64) (int64, error) {
	es, err := log.Read(ctx, id, 1, 1)
	if err != nil {
		return 0, fmt.Errorf("hub: read stream %s: %w", id, err)
	}
	if len(es) > 0 {
		return es[0].Offset, nil
	}
	return last + 1, nil
}
