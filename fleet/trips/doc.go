// Package trips is the trip domain: the lifecycle (start, pause, resume,
// stop), location upload with safety-event detection and running
// analytics, metadata, listing and route data.
//
// Uploads to one trip are serialized by a per-trip tracker kept in an LRU
// cache: it holds the trip row, the detector state and the set of stored
// timestamps. Every write compares the trip's version, so two nodes
// uploading to one trip never lose an update: the loser reloads and
// retries. Points are stored as compact blocks (one row per upload) in the
// same transaction as the trip's new analytics, before the response.
//
// The write side and the read side share one Service, each in files of its
// own:
//
//   - service.go: the Service, its dependencies, the state kept in the
//     trip row and the versioned update loop.
//   - lifecycle.go: start, pause, resume and stop.
//   - upload.go, tracker.go: location uploads and the per-trip tracker;
//     points.go: the stored point blocks; quality.go: the quality
//     assessment of a single point; publish.go: what goes on the bus.
//   - matching.go, roadjudge.go, roadmetrics.go: the road matcher beside
//     the upload path (with Config.Roads): per-shard queues of stored
//     points, map matching and speeding judged against the matched
//     roads, its metrics; roads.go: what the points' roads count as.
//   - fuel.go: the fuel model from the vehicle's profile (Profiles), and
//     the distance and fuel a trip's start and stop readings give.
//   - metadata.go: metadata updates and their history.
//   - views.go: the resources returned; list.go: listing and history.
//   - safety.go: the safety score analysis of a trip.
//   - route.go, traffic.go: the route reconstructed from the stored
//     points, with its traffic analysis; path.go: the speed profile and
//     path geometry the route and the safety score share.
//
// Safety scoring and route reconstruction stay in this package: they read
// the trip row and its point blocks through the same store and tracker
// state as the write side, and a sub-package would need those exported.
//
// Concurrency: a Service is safe for concurrent use. An upload or a
// transition of a trip holds that trip's tracker mutex for the whole
// operation, its store write and its publish included, so the operations
// on one trip run one at a time while different trips run at once; the
// versioned write still guards a trip against another node, or against a
// tracker evicted from the cache meanwhile.
//
// The road matcher's workers (RunRoads, one goroutine per shard) own
// their trips' traces and speeding detectors; an upload hands them its
// points after its commit by appending to the shard's queue under the
// shard's mutex, never waiting (past MatchQueue points the rest are
// judged without a road). A worker takes the trip's tracker mutex only
// to commit the events it raised, as an upload would. Creating a tracker takes one
// more mutex, and reads take none of the Service's.
package trips
