// Package tilestest writes small PMTiles v3 archives for tests. The format
// is written here from the specification (github.com/protomaps/PMTiles,
// spec/v3): the 127-byte header, a varint-encoded root directory, optional
// leaf directories, the JSON metadata and the tile data, with directories
// and metadata optionally gzip-compressed. Tile ids come from the inverse
// of the Hilbert curve (TileAt), not from the reader's ZxyToID, so the
// writer and the reader in internal/tiles check each other.
//
// Everything here keeps no state and is safe for concurrent use: an
// Archive is a plain value that Bytes and File only read, so parallel
// tests may share one.
package tilestest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Tile is one tile of an archive and its stored bytes.
type Tile struct {
	Z    uint8
	X, Y uint32
	Data []byte
}

// Archive describes an archive to write.
type Archive struct {
	// Tiles in any order; zooms, min and max, are taken from them. Tiles of
	// consecutive ids with equal bytes become one run-length entry, and
	// equal bytes are stored once (later entries point back to them).
	Tiles []Tile
	// Metadata is the JSON metadata, stored as given.
	Metadata []byte
	// Gzip compresses the directories and the metadata (internal
	// compression gzip); otherwise they are stored uncompressed (none).
	Gzip bool
	// LeafSize, when positive, puts the entries in leaf directories of at
	// most LeafSize entries each, pointed to by the root directory.
	LeafSize int
	// TileType and TileCompression are written in the header as given
	// (for example 1, mvt, and 2, gzip); the tiles are not compressed here.
	TileType, TileCompression uint8
	// Bounds are min lon, min lat, max lon, max lat; Center lon, lat and
	// CenterZoom.
	Bounds     [4]float64
	Center     [2]float64
	CenterZoom uint8
}

// Header field offsets, for tests that corrupt an archive.
const (
	OffRootOffset          = 8
	OffRootLength          = 16
	OffMetadataOffset      = 24
	OffMetadataLength      = 32
	OffLeafOffset          = 40
	OffLeafLength          = 48
	OffTileDataOffset      = 56
	OffTileDataLength      = 64
	OffAddressedTiles      = 72
	OffTileEntries         = 80
	OffTileContents        = 88
	OffInternalCompression = 97
	HeaderLen              = 127
)

type entry struct {
	id, offset     uint64
	length, runLen uint32
}

// Bytes returns the archive: header, root directory, metadata, leaf
// directories, tile data, in that order.
func (a Archive) Bytes() []byte {
	ids := map[uint8]map[[2]uint32]uint64{}
	type idTile struct {
		id   uint64
		data []byte
	}
	ts := make([]idTile, 0, len(a.Tiles))
	minZ, maxZ := uint8(math.MaxUint8), uint8(0)
	for _, t := range a.Tiles {
		if ids[t.Z] == nil {
			ids[t.Z] = zoomIDs(t.Z)
		}
		id, ok := ids[t.Z][[2]uint32{t.X, t.Y}]
		if !ok {
			panic("tilestest: tile outside the grid of its zoom")
		}
		ts = append(ts, idTile{id, t.Data})
		minZ, maxZ = min(minZ, t.Z), max(maxZ, t.Z)
	}
	if len(ts) == 0 {
		minZ = 0
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].id < ts[j].id })

	var data []byte
	stored := map[string]uint64{} // bytes → offset in the tile data
	var es []entry
	for i, t := range ts {
		if i > 0 && t.id == ts[i-1].id {
			panic("tilestest: the same tile twice")
		}
		if n := len(es); n > 0 && t.id == es[n-1].id+uint64(es[n-1].runLen) && bytes.Equal(t.data, ts[i-1].data) {
			es[n-1].runLen++
			continue
		}
		off, ok := stored[string(t.data)]
		if !ok {
			off = uint64(len(data))
			stored[string(t.data)] = off
			data = append(data, t.data...)
		}
		es = append(es, entry{id: t.id, offset: off, length: uint32(len(t.data)), runLen: 1})
	}

	root, leaves := es, []byte(nil)
	if a.LeafSize > 0 {
		root = nil
		for i := 0; i < len(es); i += a.LeafSize {
			leaf := a.compress(directory(es[i:min(i+a.LeafSize, len(es))]))
			root = append(root, entry{id: es[i].id, offset: uint64(len(leaves)), length: uint32(len(leaf))})
			leaves = append(leaves, leaf...)
		}
	}
	rootB, meta := a.compress(directory(root)), a.compress(a.Metadata)

	h := make([]byte, HeaderLen)
	copy(h, "PMTiles")
	h[7] = 3
	put := func(o int, v uint64) { binary.LittleEndian.PutUint64(h[o:], v) }
	off := uint64(HeaderLen)
	for _, s := range []struct {
		at int
		b  []byte
	}{{OffRootOffset, rootB}, {OffMetadataOffset, meta}, {OffLeafOffset, leaves}, {OffTileDataOffset, data}} {
		put(s.at, off)
		put(s.at+8, uint64(len(s.b)))
		off += uint64(len(s.b))
	}
	var addressed uint64
	clustered := byte(1)
	for i, e := range es {
		addressed += uint64(e.runLen)
		if i > 0 && e.offset < es[i-1].offset {
			clustered = 0
		}
	}
	put(OffAddressedTiles, addressed)
	put(OffTileEntries, uint64(len(es)))
	put(OffTileContents, uint64(len(stored)))
	h[96] = clustered
	h[OffInternalCompression] = 1
	if a.Gzip {
		h[OffInternalCompression] = 2
	}
	h[98], h[99], h[100], h[101] = a.TileCompression, a.TileType, minZ, maxZ
	e7 := func(o int, v float64) { binary.LittleEndian.PutUint32(h[o:], uint32(int32(math.Round(v*1e7)))) }
	e7(102, a.Bounds[0])
	e7(106, a.Bounds[1])
	e7(110, a.Bounds[2])
	e7(114, a.Bounds[3])
	h[118] = a.CenterZoom
	e7(119, a.Center[0])
	e7(123, a.Center[1])

	out := append(h, rootB...)
	out = append(out, meta...)
	out = append(out, leaves...)
	return append(out, data...)
}

// File writes the archive to a file in tb's temporary directory and
// returns its path.
func (a Archive) File(tb testing.TB) string {
	tb.Helper()
	return Write(tb, a.Bytes())
}

// Write writes b, an archive or not, to a file in tb's temporary
// directory and returns its path.
func Write(tb testing.TB, b []byte) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "archive.pmtiles")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

func (a Archive) compress(b []byte) []byte {
	if !a.Gzip {
		return b
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// directory encodes entries: their count, then the tile ids as deltas,
// the run lengths, the lengths and the offsets (0 when an entry's bytes
// follow the previous entry's, else offset+1), each a varint.
func directory(es []entry) []byte {
	b := binary.AppendUvarint(nil, uint64(len(es)))
	var last uint64
	for _, e := range es {
		b = binary.AppendUvarint(b, e.id-last)
		last = e.id
	}
	for _, e := range es {
		b = binary.AppendUvarint(b, uint64(e.runLen))
	}
	for _, e := range es {
		b = binary.AppendUvarint(b, uint64(e.length))
	}
	for i, e := range es {
		if i > 0 && e.offset == es[i-1].offset+uint64(es[i-1].length) {
			b = binary.AppendUvarint(b, 0)
		} else {
			b = binary.AppendUvarint(b, e.offset+1)
		}
	}
	return b
}

// FirstID is the id of the first tile of zoom z: 4^0 + … + 4^(z-1).
func FirstID(z uint8) uint64 { return (uint64(1)<<(2*uint(z)) - 1) / 3 }

// TileAt returns the tile at position d along the Hilbert curve of zoom z
// (the inverse of the curve index, as in the specification's IDToZxy).
func TileAt(z uint8, d uint64) (x, y uint32) {
	n := uint64(1) << z
	var tx, ty uint64
	for s := uint64(1); s < n; s *= 2 {
		rx := 1 & (d / 2)
		ry := 1 & (d ^ rx)
		if ry == 0 {
			if rx == 1 {
				tx, ty = s-1-tx, s-1-ty
			}
			tx, ty = ty, tx
		}
		tx += s * rx
		ty += s * ry
		d /= 4
	}
	return uint32(tx), uint32(ty)
}

// zoomIDs maps every tile of zoom z to its id.
func zoomIDs(z uint8) map[[2]uint32]uint64 {
	n := uint64(1) << (2 * uint(z))
	m := make(map[[2]uint32]uint64, n)
	for d := uint64(0); d < n; d++ {
		x, y := TileAt(z, d)
		m[[2]uint32{x, y}] = FirstID(z) + d
	}
	return m
}
