package ws

import (
	"context"
)

// An epoch names a stream's history (hub.Log.Epoch). A client's position
// is an offset and the epoch it was read in: of another epoch, the
// offset means nothing in the stream's current history, and delivery
// starts again from the oldest retained offset after a history_lost
// error, never from the offset + 1.

// validEpoch reports whether s is an epoch a client may send: 1 to
// maxEpochLen characters of A-Z, a-z, 0-9, _ and -.
func validEpoch(s string) bool {
	if len(s) == 0 || len(s) > maxEpochLen {
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

const epochRule = "epoch must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -"

// firstAvailable is the oldest offset a stream retains, or last + 1 when
// it retains nothing.
func (s *Server) firstAvailable(ctx context.Context, id string, last int64) (int64, error) {
	ents, err := s.log.Read(ctx, id, 1, 1)
	if err != nil {
		return 0, err
	}
	if len(ents) > 0 {
		return ents[0].Offset, nil
	}
	return last + 1, nil
}

// historyLost is the error telling a client that its position belongs to
// a lost history: delivery goes on from first in epoch.
func historyLost(id, epoch string, first int64) notice {
	return notice{Type: "error", Code: "history_lost", StreamID: id, Epoch: epoch, FirstAvailable: first,
		Message: "the stream's history was lost (its epoch changed): offsets of another epoch are void; delivery starts again at first_available"}
}
