// Package routing computes distance matrices over a road graph built from
// an OpenStreetMap .osm.pbf extract (--osm), so an operator can point it
// at their own region.
//
// The PBF reader is written here: it needs only dense and plain nodes and
// ways with their tags, which the protobuf wire format gives in a couple
// of hundred lines (the osmpbf package available for the module's Go
// version rejected the shared extracts' plain nodes).
package routing

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// pb is a protobuf wire-format reader over one message.
type pb struct {
	b []byte
	i int
}

var errPB = errors.New("routing: malformed protobuf")

func (p *pb) varint() (uint64, error) {
	v, n := binary.Uvarint(p.b[p.i:])
	if n <= 0 {
		return 0, errPB
	}
	p.i += n
	return v, nil
}

// next returns the next field number, wire type and, for length-delimited
// fields, the bytes (else the varint value).
func (p *pb) next() (field int, wt int, val uint64, bytes []byte, err error) {
	key, err := p.varint()
	if err != nil {
		return 0, 0, 0, nil, err
	}
	field, wt = int(key>>3), int(key&7)
	switch wt {
	case 0:
		val, err = p.varint()
	case 1:
		if p.i+8 > len(p.b) {
			return 0, 0, 0, nil, errPB
		}
		val = binary.LittleEndian.Uint64(p.b[p.i:])
		p.i += 8
	case 2:
		var l uint64
		if l, err = p.varint(); err != nil {
			return
		}
		if uint64(len(p.b)-p.i) < l {
			return 0, 0, 0, nil, errPB
		}
		bytes = p.b[p.i : p.i+int(l)]
		p.i += int(l)
	case 5:
		if p.i+4 > len(p.b) {
			return 0, 0, 0, nil, errPB
		}
		val = uint64(binary.LittleEndian.Uint32(p.b[p.i:]))
		p.i += 4
	default:
		err = errPB
	}
	return
}

func (p *pb) more() bool { return p.i < len(p.b) }

func zigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }

func packed(b []byte, f func(uint64)) error {
	p := pb{b: b}
	for p.more() {
		v, err := p.varint()
		if err != nil {
			return err
		}
		f(v)
	}
	return nil
}

// element callbacks of the reader.
type sink struct {
	node func(id int64, lat, lon float64)
	way  func(id int64, refs []int64, tags map[string]string)
}

// readPBF walks every node and way of a .osm.pbf file.
func readPBF(path string, s sink) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("routing: %w", err)
	}
	defer f.Close()
	var lenb [4]byte
	for {
		if _, err := io.ReadFull(f, lenb[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("routing: pbf: %w", err)
		}
		hl := binary.BigEndian.Uint32(lenb[:])
		if hl > 64<<10 {
			return fmt.Errorf("routing: pbf: blob header of %d bytes", hl)
		}
		hb := make([]byte, hl)
		if _, err := io.ReadFull(f, hb); err != nil {
			return fmt.Errorf("routing: pbf: %w", err)
		}
		var typ string
		var size uint64
		hp := pb{b: hb}
		for hp.more() {
			fld, _, v, bs, err := hp.next()
			if err != nil {
				return err
			}
			switch fld {
			case 1:
				typ = string(bs)
			case 3:
				size = v
			}
		}
		if size > 64<<20 {
			return fmt.Errorf("routing: pbf: blob of %d bytes", size)
		}
		blob := make([]byte, size)
		if _, err := io.ReadFull(f, blob); err != nil {
			return fmt.Errorf("routing: pbf: %w", err)
		}
		if typ != "OSMData" {
			continue
		}
		data, err := blobData(blob)
		if err != nil {
			return err
		}
		if err := block(data, s); err != nil {
			return err
		}
	}
}

func blobData(blob []byte) ([]byte, error) {
	p := pb{b: blob}
	for p.more() {
		fld, _, _, bs, err := p.next()
		if err != nil {
			return nil, err
		}
		switch fld {
		case 1: // raw
			return bs, nil
		case 3: // zlib
			zr, err := zlib.NewReader(bytes.NewReader(bs))
			if err != nil {
				return nil, fmt.Errorf("routing: pbf: %w", err)
			}
			out, err := io.ReadAll(io.LimitReader(zr, 256<<20))
			zr.Close()
			if err != nil {
				return nil, fmt.Errorf("routing: pbf: %w", err)
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("routing: pbf: blob without raw or zlib data (other compressions are not supported)")
}

func block(data []byte, s sink) error {
	var strs [][]byte
	var groups [][]byte
	gran, latOff, lonOff := int64(100), int64(0), int64(0)
	p := pb{b: data}
	for p.more() {
		fld, _, v, bs, err := p.next()
		if err != nil {
			return err
		}
		switch fld {
		case 1:
			sp := pb{b: bs}
			for sp.more() {
				_, _, _, sb, err := sp.next()
				if err != nil {
					return err
				}
				strs = append(strs, sb)
			}
		case 2:
			groups = append(groups, bs)
		case 17:
			gran = int64(v)
		case 19:
			latOff = int64(v)
		case 20:
			lonOff = int64(v)
		}
	}
	coord := func(off, v int64) float64 { return 1e-9 * float64(off+gran*v) }
	str := func(i uint64) string {
		if i < uint64(len(strs)) {
			return string(strs[i])
		}
		return ""
	}
	for _, g := range groups {
		gp := pb{b: g}
		for gp.more() {
			fld, _, _, bs, err := gp.next()
			if err != nil {
				return err
			}
			switch fld {
			case 1: // plain node
				var id, lat, lon int64
				np := pb{b: bs}
				for np.more() {
					f2, _, v, _, err := np.next()
					if err != nil {
						return err
					}
					switch f2 {
					case 1:
						id = zigzag(v)
					case 8:
						lat = zigzag(v)
					case 9:
						lon = zigzag(v)
					}
				}
				if s.node != nil {
					s.node(id, coord(latOff, lat), coord(lonOff, lon))
				}
			case 2: // dense nodes
				var ids, lats, lons []int64
				dp := pb{b: bs}
				for dp.more() {
					f2, _, _, pbs, err := dp.next()
					if err != nil {
						return err
					}
					var dst *[]int64
					switch f2 {
					case 1:
						dst = &ids
					case 8:
						dst = &lats
					case 9:
						dst = &lons
					default:
						continue
					}
					var acc int64
					if err := packed(pbs, func(v uint64) { acc += zigzag(v); *dst = append(*dst, acc) }); err != nil {
						return err
					}
				}
				if len(lats) != len(ids) || len(lons) != len(ids) {
					return errPB
				}
				if s.node != nil {
					for i := range ids {
						s.node(ids[i], coord(latOff, lats[i]), coord(lonOff, lons[i]))
					}
				}
			case 3: // way
				var id int64
				var keys, vals []uint64
				var refs []int64
				wp := pb{b: bs}
				for wp.more() {
					f2, _, v, pbs, err := wp.next()
					if err != nil {
						return err
					}
					switch f2 {
					case 1:
						id = int64(v)
					case 2:
						err = packed(pbs, func(x uint64) { keys = append(keys, x) })
					case 3:
						err = packed(pbs, func(x uint64) { vals = append(vals, x) })
					case 8:
						var acc int64
						err = packed(pbs, func(x uint64) { acc += zigzag(x); refs = append(refs, acc) })
					}
					if err != nil {
						return err
					}
				}
				if s.way != nil && len(keys) == len(vals) {
					tags := make(map[string]string, len(keys))
					for i := range keys {
						tags[str(keys[i])] = str(vals[i])
					}
					s.way(id, refs, tags)
				}
			}
		}
	}
	return nil
}
