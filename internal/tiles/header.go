package tiles

import (
	"encoding/binary"
	"errors"
)

// Compression codes of PMTiles.
const (
	compressionUnknown = 0
	compressionNone    = 1
	compressionGzip    = 2
)

// headerLen is the length of a PMTiles v3 header.
const headerLen = 127

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
	if len(b) < headerLen || string(b[0:7]) != "PMTiles" || b[7] != 3 {
		return Header{}, ErrNotPMTiles
	}
	u := func(o int) uint64 { return binary.LittleEndian.Uint64(b[o:]) }
	e7 := func(o int) float64 { return float64(int32(binary.LittleEndian.Uint32(b[o:]))) / 1e7 }
	return Header{SpecVersion: 3, RootOffset: u(8), RootLength: u(16), MetadataOffset: u(24), MetadataLength: u(32), LeafOffset: u(40), LeafLength: u(48),
		TileDataOffset: u(56), TileDataLength: u(64), InternalCompression: b[97], TileCompression: b[98], TileType: b[99], MinZoom: b[100], MaxZoom: b[101],
		MinLon: e7(102), MinLat: e7(106), MaxLon: e7(110), MaxLat: e7(114), CenterZoom: b[118], CenterLon: e7(119), CenterLat: e7(123)}, nil
}
