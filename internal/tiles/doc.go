// Package tiles reads PMTiles v3 archives: the 127-byte header, the JSON
// metadata, the root and leaf directories, and the stored bytes of a tile
// by z/x/y. It serves nothing over HTTP; api/tiles does.
//
// An archive is a local file. Open reads the header, the metadata and the
// root directory once; Tile looks a tile id (ZxyToID: tiles of lower zooms
// first, then the Hilbert curve index within the zoom) up in the root
// directory and, when it points to one, in a leaf directory, then reads
// the tile's bytes from the file. Directories and metadata may be
// uncompressed or gzip-compressed (the archive's internal compression);
// tiles are returned as stored, compressed as Header.TileCompression says.
// A tile the archive does not hold is reported as missing (ok false), not
// as an error; a corrupt or truncated archive gives an error, never a
// panic (FuzzOpen).
//
// Concurrency: an open Archive is safe for concurrent use by any number of
// goroutines calling Tile and ReadAt (the archive's raw bytes, for a
// client that reads the archive itself by range). Reads go through ReadAt
// on the file, which has no shared offset, and the cache of parsed leaf directories (at most
// 4,096 leaves, emptied whole when full) is guarded by a mutex. Header,
// Metadata and Path are set by Open and only read afterwards; callers must
// not modify them. Close is called once, after the last Tile or ReadAt;
// either after Close returns an error.
//
// Measured with BenchmarkTile (21,845 tiles, z0–z7) on a busy 2-vCPU VM:
// a lookup takes about 1.1 µs and one allocation (the tile's bytes),
// through the root directory alone or a cached leaf directory alike; two
// thirds of it is the pread system call that reads the tile.
//
// The reader is written here, not taken from protomaps/go-pmtiles, against
// the house preference for a library: that module brings cloud-storage
// clients for every provider, while serving a local file needs the
// 127-byte header, the directory encoding (varints, delta-coded tile ids)
// and the Hilbert tile id, about two hundred lines.
package tiles
