// Package routing is the road-routing engine: it imports the roads of an
// OpenStreetMap extract (.osm.pbf or OSM XML), builds for each costing
// (auto, truck, bicycle, pedestrian) an edge-based routing graph with its
// road rules and a contraction hierarchy over it, and answers many-to-many
// queries (the distance and time from every source to every target)
// between locations snapped onto the nearest road segment. It holds no
// HTTP: the handlers in api/routing decode a request, call Graph.Route and
// encode the answer.
//
// # Files
//
//   - pbf.go: the .osm.pbf reader (blobs, primitive blocks, plain and dense
//     nodes with their tags, ways, relations).
//   - xml.go: the OSM XML reader (nodes, ways and relations with their
//     tags, handed to the same callbacks as the PBF reader's).
//   - osm.go: the format of an extract recognised by its content (gzip,
//     bzip2, XML or PBF), and what the graph needs of it: coordinates, the
//     tags of nodes that matter (signals, barriers, access), highways, and
//     turn restrictions.
//   - profile.go: the road rules of each costing: speeds, maxspeed, access,
//     one-ways, the bicycle's contraflow and pushing, truck limits,
//     barriers.
//   - costing.go: the costings.
//   - speeds.go: each way's road class and speed limit each way (posted
//     maxspeed or a default per class), and the edge accessors the map
//     matcher (internal/mapmatch) reads.
//   - graph.go: the roads cut into edges at junctions, with their points.
//   - turns.go: the turn graph of a costing (a node per edge and
//     direction, an arc per allowed turn with its cost) and its largest
//     strongly connected component.
//   - ch.go: the contraction hierarchy.
//   - query.go: the bucket many-to-many search.
//   - snap.go: the segment grid and snapping.
//   - engine.go: Load, Read, Route and Matrix; the plain Dijkstra for a
//     truck whose size changes the network.
//   - cache.go: the graph saved under the data directory.
//
// The PBF reader is written here rather than taken from a library: it
// needs only nodes, ways and relations with their tags, which the
// protobuf wire format gives in a few hundred lines, and the osmpbf
// package available for the module's Go version rejected the shared
// extracts' plain nodes.
//
// # Concurrency
//
// Load and Read build a Graph and return it; nothing changes it afterwards.
// A Graph is read-only and safe for any number of concurrent Route calls.
// A call runs two worker goroutines that it owns and joins before it
// returns; their scratch (labels the size of the graph) comes from a
// small free list of the costing and goes back to it. Building contracts
// two costings at a time, each on its own goroutine, joined before Read
// returns. The rule tables are package-level values filled at init and
// only read afterwards.
//
// # Cost
//
// Routes minimize a weight: the travel time, plus turn and signal
// penalties, with roads a costing avoids (parking aisles for cars, busy
// roads without a cycle lane for bicycles) weighing more than their time
// and roads for local access only costing a large penalty to enter. The
// answer is the chosen route's own distance and time. See docs/routing.md.
package routing
