package tiles

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
)

// entry is one directory entry: a run of runLength tiles from tileID that
// share the bytes at offset, or with runLength 0 a leaf directory.
type entry struct {
	tileID    uint64
	offset    uint64
	length    uint32
	runLength uint32
}

func readVarint(r *bytes.Reader) (uint64, error) { return binary.ReadUvarint(r) }

// parseDirectory decodes a directory: the entry count, then the tile ids
// (delta-coded), the run lengths, the lengths and the offsets (0 for
// "right after the previous entry", else offset+1), each a varint.
func parseDirectory(b []byte) ([]entry, error) {
	r := bytes.NewReader(b)
	n, err := readVarint(r)
	// every entry takes at least one byte in each of the four columns, so
	// a larger count is corrupt; checked before allocating for it
	if err != nil || n > 10_000_000 || n > uint64(r.Len())/4 {
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

// find returns the entry that holds id: the last entry at or before it,
// if its run covers id or it points to a leaf directory.
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
