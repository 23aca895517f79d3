// Package routing is the road-routing engine: it imports the roads of an
// OpenStreetMap .osm.pbf extract, keeps them as one road graph whose edges
// carry a road class and a direction, and answers many-to-many queries
// (the distance and time from every source to every target) for each
// costing: auto, truck, bicycle and pedestrian. It holds no HTTP: the
// handlers in api/routing decode a request, call Graph.Matrix and encode
// the answer.
//
// # Files
//
//   - pbf.go: the .osm.pbf reader (blobs, primitive blocks, plain and dense
//     nodes, ways with their tags).
//   - osm.go: which ways are roads and which way they run (highway, oneway,
//     junction=roundabout, area).
//   - costing.go: the costings and their speed per road class.
//   - graph.go: the graph in compressed adjacency form and its snapping grid.
//   - matrix.go: snapping, Dijkstra per source, the many-to-many query.
//
// The PBF reader is written here rather than taken from a library: it needs
// only dense and plain nodes and ways with their tags, which the protobuf
// wire format gives in a couple of hundred lines, and the osmpbf package
// available for the module's Go version rejected the shared extracts'
// plain nodes.
//
// # Concurrency
//
// Load and Read build a Graph and return it; nothing changes it afterwards.
// A loaded Graph is read-only and safe for any number of concurrent
// Matrix calls. Each Matrix call allocates its own scratch space (three
// slices of the graph's size per worker) and runs two worker goroutines
// that it owns and joins before it returns; nothing outlives the call.
// The speed tables are package-level constants in all but name: they are
// filled once at init and only read afterwards.
//
// # Cost
//
// Routes minimize time. A location snaps to the nearest node that has a
// road usable by the costing, within MaxSnapM; the legs between the
// locations and the road count at the costing's residential speed (at
// least 5 km/h). Pedestrians ignore one-way streets.
package routing
