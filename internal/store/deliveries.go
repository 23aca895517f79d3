package store

import (
	"context"
	"time"
)

// Delivery statuses.
const (
	// DeliveryPending: not attempted yet (or requeued), due at NextAttemptAt.
	DeliveryPending = "pending"
	// DeliveryFailed: the last attempt failed; another is due at
	// NextAttemptAt.
	DeliveryFailed = "failed"
	// DeliveryDelivered: a 2xx acknowledged it.
	DeliveryDelivered = "delivered"
	// DeliveryDeadLettered: retries ran out or the receiver refused it
	// for good; kept for reading and replay.
	DeliveryDeadLettered = "dead_lettered"
	// DeliveryDisabled: the stream's endpoint answered 410 Gone; nothing
	// is sent until a replay or a new webhook_url enables it again.
	DeliveryDisabled = "disabled"
)

// DeliveryStatuses lists every status.
var DeliveryStatuses = []string{DeliveryPending, DeliveryFailed, DeliveryDelivered, DeliveryDeadLettered, DeliveryDisabled}

// Delivery is one webhook message of a stream: the message at Offset of
// the stream's log, wrapped as Payload. ID is stable for the life of the
// row (it is the webhook-id). A delivery is claimable when its status is
// pending or failed, NextAttemptAt has come and its lease has expired.
type Delivery struct {
	ID             string
	Org            string
	Env            string
	StreamID       string
	Offset         int64
	Payload        []byte // JSON {"stream_id","offset","message"}
	Status         string
	Attempts       int
	NextAttemptAt  time.Time
	QueuedAt       time.Time // start of the retry window: enqueue or last requeue
	LastStatusCode int       // 0: no HTTP answer
	LastError      string
	LastLatencyMS  int64
	CreatedAt      time.Time
	DeliveredAt    time.Time // zero until delivered
	LeaseOwner     string    // node holding it, "" when none
	LeaseUntil     time.Time // zero when not leased
	Seq            int64     // insertion order, set by the store; the listing cursor
	// Park asks EnqueueDeliveries to park it (see UnparkDeliveries);
	// ListParkedDeliveries sets it on what it lists.
	Park bool
}

// DeliveryClaim asks for due deliveries of some streams.
type DeliveryClaim struct {
	Owner     string
	StreamIDs []string
	Now       time.Time
	Until     time.Time // lease end
	Limit     int
}

// DeliveryResult is the outcome of an attempt (or of a decision made
// without one, such as dead-lettering the deliveries of a vanished
// stream).
type DeliveryResult struct {
	ID string
	// Seq is the row's Seq when the writer knows it (0 when not): a
	// backend may find the row by it rather than by ID, which it still
	// checks.
	Seq           int64
	Status        string // the new status
	Attempted     bool   // adds one to Attempts; without it StatusCode and LatencyMS are not recorded (the last attempt's stay)
	NextAttemptAt time.Time
	StatusCode    int
	Error         string
	LatencyMS     int64
	At            time.Time // DeliveredAt when delivered
}

// DeliveryQuery pages a stream's deliveries, newest first.
type DeliveryQuery struct {
	Status string // "" for any
	Limit  int
	Before int64 // Seq cursor: only rows with a smaller Seq; 0 for the first page
}

// DeliveryRequeue selects deliveries of a stream to send again: by ids,
// or by creation time in [From, To).
type DeliveryRequeue struct {
	IDs      []string
	From, To time.Time
	Now      time.Time
}

// DeliveryRequeued is what a requeue did. NotFound, InFlight and Queued
// are set (non-nil) for a requeue by ids only: each id given once, in the
// order given, that is no delivery of the stream in the scope (NotFound),
// one leased at Now and left alone (InFlight), or one parked, not yet in
// the log and never attempted, left to go out as it is (Queued).
type DeliveryRequeued struct {
	Requeued int64
	NotFound []string
	InFlight []string
	Queued   []string
}

// DeliveryStream is a stream with deliveries due, or a disabled one.
type DeliveryStream struct {
	StreamID   string
	Org        string
	Env        string
	Due        bool // it has a claimable delivery
	Disabled   bool
	DisabledAt time.Time
	URL        string // the webhook URL that was disabled
	Reason     string
}

// Deliveries is the durable webhook delivery queue and its log.
//
// Several nodes share it: deliveries are handed out under a lease
// (owner, until), and every write of an outcome is conditional on the
// lease still being the writer's, so a node whose lease was taken over
// cannot overwrite what the new holder did.
type Deliveries interface {
	// EnqueueDeliveries inserts deliveries (Status, Seq and attempts
	// are set by the store; LeaseOwner and LeaseUntil are kept, so the
	// caller may hold what it inserts). A delivery whose ID exists is
	// left untouched: enqueueing is idempotent. A delivery of a stream
	// whose endpoint is disabled is stored disabled. It returns the rows
	// inserted, with their status.
	//
	// A delivery with Park set is one nobody can send now (its endpoint's
	// circuit is open, or its queue is full): the backend may store it
	// as cheaply as it can, durable at return but listed and claimable
	// only once UnparkDeliveries moved it (counted as pending meanwhile);
	// it is not among the rows returned then. Duplicates of known ids are
	// dropped by the move.
	EnqueueDeliveries(ctx context.Context, ds []Delivery) ([]Delivery, error)
	// ParkedStreams lists the streams with parked deliveries.
	ParkedStreams(ctx context.Context) ([]string, error)
	// UnparkDeliveries moves up to limit of a stream's parked
	// deliveries, oldest first, into the queue as EnqueueDeliveries would,
	// and returns how many it moved (0 on a backend that does not park).
	UnparkDeliveries(ctx context.Context, streamID string, limit int) (int64, error)
	// ClaimDeliveries leases up to Limit claimable deliveries of the
	// streams, oldest due first. Concurrent claimers never get the same
	// row.
	ClaimDeliveries(ctx context.Context, c DeliveryClaim) ([]Delivery, error)
	// RenewDeliveryLeases extends the leases owner still holds and
	// returns the ids it no longer holds.
	RenewDeliveryLeases(ctx context.Context, owner string, ids []string, until time.Time) (lost []string, err error)
	// ReleaseDeliveries gives back unattempted leased deliveries, due
	// again at next.
	ReleaseDeliveries(ctx context.Context, owner string, ids []string, next time.Time) error
	// RecordDeliveries writes outcomes of deliveries leased by owner and
	// ends their leases; rows no longer leased by owner are skipped.
	RecordDeliveries(ctx context.Context, owner string, rs []DeliveryResult) error
	// DeliveryStreams returns the streams with a claimable delivery at
	// now, and every disabled stream. The deliveries of the streams in
	// full are not looked at (a caller whose queues for them have no
	// room): they are listed only when disabled, with Due false.
	DeliveryStreams(ctx context.Context, now time.Time, full []string) ([]DeliveryStream, error)
	// ListDeliveries pages a stream's deliveries, newest first; next is
	// the cursor of the following page, 0 at the end.
	ListDeliveries(ctx context.Context, sc Scope, streamID string, q DeliveryQuery) (ds []Delivery, next int64, err error)
	// RequeueDeliveries makes the selected deliveries pending and due at
	// r.Now with attempts reset (ids unchanged), skipping rows leased at
	// r.Now; it enables a disabled endpoint. It returns how many, and for
	// a requeue by ids, the ids it did not find, the leased ones and the
	// parked ones.
	RequeueDeliveries(ctx context.Context, sc Scope, streamID string, r DeliveryRequeue) (DeliveryRequeued, error)
	// ListParkedDeliveries pages a stream's parked deliveries of the
	// scope, newest first, with Park set and status pending: the ones
	// ListDeliveries does not list yet, newer than all it lists (they
	// enter the log after them). before is a position of the backend's
	// (0 for the first page); next is the position of the following
	// page, 0 at the end. None on a backend that does not park.
	ListParkedDeliveries(ctx context.Context, sc Scope, streamID string, before int64, limit int) (ds []Delivery, next int64, err error)
	// CountDeliveries counts a stream's deliveries per status, parked
	// ones as pending.
	CountDeliveries(ctx context.Context, sc Scope, streamID string) (map[string]int64, error)
	// DisableDeliveries marks a stream's endpoint disabled (recording
	// url and reason) and moves its pending and failed deliveries to
	// disabled, returning how many moved.
	DisableDeliveries(ctx context.Context, sc Scope, streamID, url, reason string, at time.Time) (int64, error)
	// EnableDeliveries clears the disabled mark and makes the stream's
	// disabled deliveries pending, due at now.
	EnableDeliveries(ctx context.Context, sc Scope, streamID string, now time.Time) (int64, error)
	// PurgeDeliveries deletes up to limit deliveries in one of statuses
	// created before before, returning how many.
	PurgeDeliveries(ctx context.Context, statuses []string, before time.Time, limit int) (int64, error)
}
