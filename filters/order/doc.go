// Package order puts the messages of each source back in sequence order:
// a bounded reorder buffer per source (a vehicle, a device), keyed by the
// message's sequence number (Event.Metadata.SequenceNumber,
// Telemetry.Sequence), for streams whose processing_rules ask for
// event_ordering.
//
// The first sequence number seen from a source starts its sequence. Push
// releases an item at once when its number is the next expected one,
// together with every buffered item that follows without a gap; an item
// after a gap waits in the buffer. A gap is given up on, and the items
// behind it released in order, when
//
//   - an item has waited MaxWait: Expire(now) releases every item up to
//     the newest one that has waited that long, so no item is held longer
//     than MaxWait past the next Expire (call Expire on a ticker, e.g.
//     every MaxWait/4);
//   - a source's buffer would exceed MaxBuffered: Push releases the
//     oldest buffered items at once.
//
// The released item after a gap carries Skipped, the count of sequence
// numbers given up on, for metrics.
//
// # Late items: released and flagged, not dropped
//
// An item whose number is below the next expected one (it arrived after
// its gap was given up on, or it is a redelivery of a released item) is
// released at once with Late set. We flag rather than drop because a
// late message is still true, and for safety and emergency events losing
// it is worse than delivering it out of order; the Sequencer cannot tell a
// late message from a duplicate, the event-id dedup window (package
// dedup) can. A consumer that wants strict order drops Late items. That is
// why Push and Expire return Items (value, source, sequence, flags), not
// bare values. An item whose number is already buffered is a copy: it is
// buffered after the first and released right after it (a consumer that
// wants one of each deduplicates by id), so nothing pushed is dropped.
//
// A device that restarts its numbering (a reboot) would make every item
// late until the source is forgotten: a source with nothing buffered is
// forgotten after IdleTimeout without a Push. Sequence numbers must stay
// below math.MaxInt64.
//
// At most MaxSources sources are remembered (default 100,000): a Push
// from a new source beyond it forgets the source pushed to least
// recently, first releasing what that source buffered, in order. So the
// memory of a Sequencer is bounded by MaxSources × (MaxBuffered items +
// a small per-source record) whatever the number of distinct sources.
//
// A Sequencer is safe for concurrent use; every method takes its mutex.
// The clock is the caller's: Push and Expire take now. Measured on a
// 2-vCPU AMD EPYC VM: Push in order about 60 ns with one allocation (the
// returned slice; AppendPush into a slice the caller reuses allocates
// nothing); swapped pairs about 95 ns per Push. A source's record is
// found through a table of the hashes of the names beside the records
// (the name compared on a match), and the order of the sources' pushes
// (for MaxSources) is a list linked through the records themselves, so
// that a push touches the table's line and the records, not a map's key
// bytes or list elements elsewhere; AppendPushAll reads all of a run's
// lines and records before pushing any. With 100,000 sources, runs of
// 512 in-order pushes from sources far apart cost about 160 ns a push
// (BenchmarkSequencerPushAll, on a 2-vCPU VM shared with other work;
// 410 to 550 ns with a map of names in the same runs).
package order
