package ws

import "github.com/fleethub/fleethub/hub"

// An epoch names a stream's history (hub.Log.Epoch); hub.Resume,
// hub.FirstAvailable and hub.ValidEpoch hold its rules for every reader
// of the stream logs.

// historyLost is the error telling a client that its position belongs to
// a lost history: delivery goes on from first in epoch.
func historyLost(id, epoch string, first int64) notice {
	return notice{Type: "error", Code: "history_lost", StreamID: id, Epoch: epoch, FirstAvailable: first,
		Message: hub.HistoryLostMessage}
}
