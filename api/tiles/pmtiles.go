// Package tiles serves a PMTiles v3 archive: its header and metadata, and
// its tiles by z/x/y.
//
// The reader is written here, not taken from protomaps/go-pmtiles: that
// module brings cloud-storage clients for every provider, while serving a
// local file needs the 127-byte header, the directory encoding (varints,
// delta-coded tile ids) and the Hilbert tile id, about two hundred lines.
package tiles

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
)

// Compression codes of PMTiles.
const (
	compressionUnknown = 0
	compressionNone    = 1
	compressionGzip    = 2
)

// Header is the PMTiles v3 header.
type Header struct {
	SpecVersion         int
	RootOffset          uint64
	RootLength          uint64
	MetadataOffset      uint64
	MetadataLength      uint64
	LeafOffset          uint64
	LeafLength          uint64
	TileDataOffset      uint64
	TileDataLength      uint64
	InternalCompression uint8
	TileCompression     uint8
	TileType            uint8
	MinZoom, MaxZoom    uint8
	MinLon, MinLat      float64
	MaxLon, MaxLat      float64
	CenterZoom          uint8
	CenterLon           float64
	CenterLat           float64
}

// ErrNotPMTiles is a file that is not a PMTiles v3 archive.
var ErrNotPMTiles = errors.New("tiles: not a PMTiles v3 archive")

func parseHeader(b []byte) (Header, error) {
	if len(b) < 127 || string(b[0:7]) != "PMTiles" || b[7] != 3 {
		return Header{}, ErrNotPMTiles
	}
	u := func(o int) uint64 { return binary.LittleEndian.Uint64(b[o:]) }
	e7 := func(o int) float64 { return float64(int32(binary.LittleEndian.Uint32(b[o:]))) / 1e7 }
	return Header{SpecVersion: 3, RootOffset: u(8), RootLength: u(16), MetadataOffset: u(24), MetadataLength: u(32), LeafOffset: u(40), LeafLength: u(48),
		TileDataOffset: u(56), TileDataLength: u(64), InternalCompression: b[97], TileCompression: b[98], TileType: b[99], MinZoom: b[100], MaxZoom: b[101],
		MinLon: e7(102), MinLat: e7(106), MaxLon: e7(110), MaxLat: e7(114), CenterZoom: b[118], CenterLon: e7(119), CenterLat: e7(123)}, nil
}

type entry struct {
	tileID    uint64
	offset    uint64
	length    uint32
	runLength uint32
}

func readVarint(r *bytes.Reader) (uint64, error) { return binary.ReadUvarint(r) }

func parseDirectory(b []byte) ([]entry, error) {
	r := bytes.NewReader(b)
	n, err := readVarint(r)
	if err != nil || n > 10_000_000 {
		return nil, fmt.Errorf("tiles: directory: bad entry count")
	}
	es := make([]entry, n)
	var last uint64
	for i := range es {
		v, err := readVarint(r)
		if err != nil {
			return nil, err
		}
		last += v
		es[i].tileID = last
	}
	for i := range es {
		v, err := readVarint(r)
		if err != nil {
			return nil, err
		}
		es[i].runLength = uint32(v)
	}
	for i := range es {
		v, err := readVarint(r)
		if err != nil {
			return nil, err
		}
		es[i].length = uint32(v)
	}
	for i := range es {
		v, err := readVarint(r)
		if err != nil {
			return nil, err
		}
		if v == 0 && i > 0 {
			es[i].offset = es[i-1].offset + uint64(es[i-1].length)
		} else {
			es[i].offset = v - 1
		}
	}
	return es, nil
}

// ZxyToID is the PMTiles tile id: tiles of lower zooms first, then the
// Hilbert curve index within the zoom.
func ZxyToID(z uint8, x, y uint32) uint64 {
	var acc uint64
	for t := uint8(0); t < z; t++ {
		acc += uint64(1) << (2 * t)
	}
	n := uint64(1) << z
	var d uint64
	tx, ty := uint64(x), uint64(y)
	for s := n / 2; s > 0; s /= 2 {
		var rx, ry uint64
		if tx&s > 0 {
			rx = 1
		}
		if ty&s > 0 {
			ry = 1
		}
		d += s * s * ((3 * rx) ^ ry)
		// rotate
		if ry == 0 {
			if rx == 1 {
				tx = s - 1 - tx
				ty = s - 1 - ty
			}
			tx, ty = ty, tx
		}
	}
	return acc + d
}

// Archive is an open PMTiles file.
type Archive struct {
	f        *os.File
	Path     string
	Header   Header
	Metadata []byte // JSON
	root     []entry
	mu       sync.Mutex // guards leaves
	leaves   map[uint64][]entry
}

// Open reads an archive's header, metadata and root directory.
func Open(path string) (*Archive, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tiles: %w", err)
	}
	a := &Archive{f: f, Path: path, leaves: map[uint64][]entry{}}
	hb := make([]byte, 127)
	if _, err := io.ReadFull(f, hb); err != nil {
		f.Close()
		return nil, ErrNotPMTiles
	}
	if a.Header, err = parseHeader(hb); err != nil {
		f.Close()
		return nil, err
	}
	if a.Metadata, err = a.section(a.Header.MetadataOffset, a.Header.MetadataLength, a.Header.InternalCompression); err != nil {
		f.Close()
		return nil, err
	}
	rb, err := a.section(a.Header.RootOffset, a.Header.RootLength, a.Header.InternalCompression)
	if err != nil {
		f.Close()
		return nil, err
	}
	if a.root, err = parseDirectory(rb); err != nil {
		f.Close()
		return nil, err
	}
	return a, nil
}

// Close closes the file.
func (a *Archive) Close() error { return a.f.Close() }

func (a *Archive) section(off, n uint64, comp uint8) ([]byte, error) {
	if n > 64<<20 {
		return nil, fmt.Errorf("tiles: section of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := a.f.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("tiles: read: %w", err)
	}
	return decompress(b, comp)
}

func decompress(b []byte, comp uint8) ([]byte, error) {
	switch comp {
	case compressionNone, compressionUnknown:
		return b, nil
	case compressionGzip:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("tiles: gzip: %w", err)
		}
		defer zr.Close()
		return io.ReadAll(io.LimitReader(zr, 256<<20))
	}
	return nil, fmt.Errorf("tiles: compression %d not supported", comp)
}

func find(es []entry, id uint64) (entry, bool) {
	i := sort.Search(len(es), func(i int) bool { return es[i].tileID > id }) - 1
	if i < 0 {
		return entry{}, false
	}
	e := es[i]
	if e.runLength == 0 || id < e.tileID+uint64(e.runLength) {
		return e, true
	}
	return entry{}, false
}

// Tile returns the stored bytes of a tile (compressed as the archive's
// TileCompression says); ok is false when the archive has no such tile.
func (a *Archive) Tile(z uint8, x, y uint32) ([]byte, bool, error) {
	if z < a.Header.MinZoom || z > a.Header.MaxZoom || x >= 1<<z || y >= 1<<z {
		return nil, false, nil
	}
	id := ZxyToID(z, x, y)
	dir := a.root
	for depth := 0; depth < 4; depth++ {
		e, ok := find(dir, id)
		if !ok {
			return nil, false, nil
		}
		if e.runLength > 0 {
			b := make([]byte, e.length)
			if _, err := a.f.ReadAt(b, int64(a.Header.TileDataOffset+e.offset)); err != nil {
				return nil, false, fmt.Errorf("tiles: read tile: %w", err)
			}
			return b, true, nil
		}
		a.mu.Lock()
		leaf, cached := a.leaves[e.offset]
		a.mu.Unlock()
		if !cached {
			b, err := a.section(a.Header.LeafOffset+e.offset, uint64(e.length), a.Header.InternalCompression)
			if err != nil {
				return nil, false, err
			}
			if leaf, err = parseDirectory(b); err != nil {
				return nil, false, err
			}
			a.mu.Lock()
			if len(a.leaves) > 4096 {
				a.leaves = map[uint64][]entry{}
			}
			a.leaves[e.offset] = leaf
			a.mu.Unlock()
		}
		dir = leaf
	}
	return nil, false, nil
}
