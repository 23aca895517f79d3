package routing

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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

// Limits of the reader, from the format's own (a blob header is at most
// 64 KiB, a blob at most 32 MiB), with room to spare.
const (
	maxHeaderBytes  = 64 << 10
	maxBlobBytes    = 64 << 20
	maxInflateBytes = 256 << 20
)

// element callbacks of the reader; any may be nil. nodeTags is called,
// after node, only for nodes that carry tags.
type sink struct {
	node     func(id int64, lat, lon float64)
	nodeTags func(id int64, tags map[string]string)
	way      func(id int64, refs []int64, tags map[string]string)
	relation func(id int64, members []member, tags map[string]string)
}

// member is one member of a relation: its type (0 node, 1 way,
// 2 relation), id and role.
type member struct {
	typ  uint8
	id   int64
	role string
}

// readPBF walks every node and way of a .osm.pbf stream. It stops at the
// first malformed blob.
func readPBF(r io.Reader, s sink) error {
	for {
		typ, blob, err := nextBlob(r)
		if err == io.EOF { // a clean end; a truncated block is wrapped and fails
			return nil
		}
		if err != nil {
			return err
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

// nextBlob reads one file block: the length of its header, the BlobHeader
// and the Blob it announces. It returns io.EOF, unwrapped, at a clean end
// of the stream.
func nextBlob(r io.Reader) (typ string, blob []byte, err error) {
	var lenb [4]byte
	if _, err := io.ReadFull(r, lenb[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return "", nil, io.EOF
		}
		return "", nil, fmt.Errorf("routing: pbf: %w", err)
	}
	hl := binary.BigEndian.Uint32(lenb[:])
	if hl > maxHeaderBytes {
		return "", nil, fmt.Errorf("routing: pbf: blob header of %d bytes", hl)
	}
	hb := make([]byte, hl)
	if _, err := io.ReadFull(r, hb); err != nil {
		return "", nil, fmt.Errorf("routing: pbf: %w", err)
	}
	typ, size, err := blobHeader(hb)
	if err != nil {
		return "", nil, err
	}
	if size > maxBlobBytes {
		return "", nil, fmt.Errorf("routing: pbf: blob of %d bytes", size)
	}
	if blob, err = readN(r, size); err != nil {
		return "", nil, fmt.Errorf("routing: pbf: %w", err)
	}
	return typ, blob, nil
}

// blobHeader decodes a BlobHeader: the blob's type and size.
func blobHeader(hb []byte) (typ string, size uint64, err error) {
	hp := pb{b: hb}
	for hp.more() {
		fld, _, v, bs, err := hp.next()
		if err != nil {
			return "", 0, err
		}
		switch fld {
		case 1:
			typ = string(bs)
		case 3:
			size = v
		}
	}
	return typ, size, nil
}

// readN reads exactly n bytes. Past 1 MiB it grows its buffer as bytes
// arrive instead of trusting the announced size, so a short or hostile
// stream cannot make it allocate 64 MiB up front.
func readN(r io.Reader, n uint64) ([]byte, error) {
	if n <= 1<<20 {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// blobData returns a Blob's bytes, inflated when they are zlib data.
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
			out, err := io.ReadAll(io.LimitReader(zr, maxInflateBytes))
			zr.Close()
			if err != nil {
				return nil, fmt.Errorf("routing: pbf: %w", err)
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("routing: pbf: blob without raw or zlib data (other compressions are not supported)")
}

// primitiveBlock is an OSMData block: its string table, its coordinate
// scale and the primitive groups still to decode.
type primitiveBlock struct {
	strs           [][]byte
	groups         [][]byte
	gran           int64 // nanodegrees per coordinate unit
	latOff, lonOff int64 // nanodegrees
}

// block decodes one OSMData block and hands its nodes and ways to s.
func block(data []byte, s sink) error {
	b, err := parseBlock(data)
	if err != nil {
		return err
	}
	for _, g := range b.groups {
		if err := b.group(g, s); err != nil {
			return err
		}
	}
	return nil
}

func parseBlock(data []byte) (*primitiveBlock, error) {
	b := &primitiveBlock{gran: 100}
	p := pb{b: data}
	for p.more() {
		fld, _, v, bs, err := p.next()
		if err != nil {
			return nil, err
		}
		switch fld {
		case 1:
			if b.strs, err = stringTable(bs); err != nil {
				return nil, err
			}
		case 2:
			b.groups = append(b.groups, bs)
		case 17:
			b.gran = int64(v)
		case 19:
			b.latOff = int64(v)
		case 20:
			b.lonOff = int64(v)
		}
	}
	return b, nil
}

// stringTable decodes a StringTable: every field is one string.
func stringTable(bs []byte) ([][]byte, error) {
	var strs [][]byte
	sp := pb{b: bs}
	for sp.more() {
		_, _, _, sb, err := sp.next()
		if err != nil {
			return nil, err
		}
		strs = append(strs, sb)
	}
	return strs, nil
}

func (b *primitiveBlock) coord(off, v int64) float64 { return 1e-9 * float64(off+b.gran*v) }

func (b *primitiveBlock) str(i uint64) string {
	if i < uint64(len(b.strs)) {
		return string(b.strs[i])
	}
	return ""
}

// group decodes one PrimitiveGroup; changesets are skipped.
func (b *primitiveBlock) group(g []byte, s sink) error {
	gp := pb{b: g}
	for gp.more() {
		fld, _, _, bs, err := gp.next()
		if err != nil {
			return err
		}
		switch fld {
		case 1:
			err = b.plainNode(bs, s)
		case 2:
			err = b.denseNodes(bs, s)
		case 3:
			err = b.way(bs, s)
		case 4:
			err = b.relation(bs, s)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// plainNode decodes a Node with its tags.
func (b *primitiveBlock) plainNode(bs []byte, s sink) error {
	var id, lat, lon int64
	var keys, vals []uint64
	np := pb{b: bs}
	for np.more() {
		f, _, v, pbs, err := np.next()
		if err != nil {
			return err
		}
		switch f {
		case 1:
			id = zigzag(v)
		case 2:
			err = packed(pbs, func(x uint64) { keys = append(keys, x) })
		case 3:
			err = packed(pbs, func(x uint64) { vals = append(vals, x) })
		case 8:
			lat = zigzag(v)
		case 9:
			lon = zigzag(v)
		}
		if err != nil {
			return err
		}
	}
	if s.node != nil {
		s.node(id, b.coord(b.latOff, lat), b.coord(b.lonOff, lon))
	}
	if s.nodeTags != nil && len(keys) > 0 && len(keys) == len(vals) {
		s.nodeTags(id, b.tags(keys, vals))
	}
	return nil
}

// tags pairs up string-table indexes of keys and values.
func (b *primitiveBlock) tags(keys, vals []uint64) map[string]string {
	t := make(map[string]string, len(keys))
	for i := range keys {
		t[b.str(keys[i])] = b.str(vals[i])
	}
	return t
}

// denseNodes decodes DenseNodes: delta-coded ids and coordinates, and
// the keys and values of every node's tags, each node's list ended by 0.
func (b *primitiveBlock) denseNodes(bs []byte, s sink) error {
	var ids, lats, lons []int64
	var kv []uint64
	dp := pb{b: bs}
	for dp.more() {
		f, _, _, pbs, err := dp.next()
		if err != nil {
			return err
		}
		var dst *[]int64
		switch f {
		case 1:
			dst = &ids
		case 8:
			dst = &lats
		case 9:
			dst = &lons
		case 10:
			if err := packed(pbs, func(x uint64) { kv = append(kv, x) }); err != nil {
				return err
			}
			continue
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
			s.node(ids[i], b.coord(b.latOff, lats[i]), b.coord(b.lonOff, lons[i]))
		}
	}
	if s.nodeTags != nil && len(kv) > 0 {
		b.denseTags(ids, kv, s)
	}
	return nil
}

// denseTags hands the tags of dense nodes to s; a list that runs out
// before its last node ends the walk.
func (b *primitiveBlock) denseTags(ids []int64, kv []uint64, s sink) {
	k := 0
	for _, id := range ids {
		var keys, vals []uint64
		for k+1 < len(kv) && kv[k] != 0 {
			keys, vals = append(keys, kv[k]), append(vals, kv[k+1])
			k += 2
		}
		if k >= len(kv) {
			return
		}
		k++ // the 0 that ends this node's list
		if len(keys) > 0 {
			s.nodeTags(id, b.tags(keys, vals))
		}
	}
}

// way decodes a Way: its id, tags and delta-coded node references. A way
// whose keys and values do not pair up is dropped.
func (b *primitiveBlock) way(bs []byte, s sink) error {
	var id int64
	var keys, vals []uint64
	var refs []int64
	wp := pb{b: bs}
	for wp.more() {
		f, _, v, pbs, err := wp.next()
		if err != nil {
			return err
		}
		switch f {
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
		s.way(id, refs, b.tags(keys, vals))
	}
	return nil
}

// relation decodes a Relation: its id, tags and members (roles, delta-
// coded ids and types). A relation whose lists do not pair up is dropped.
func (b *primitiveBlock) relation(bs []byte, s sink) error {
	var id int64
	var keys, vals, roles, types []uint64
	var ids []int64
	rp := pb{b: bs}
	for rp.more() {
		f, _, v, pbs, err := rp.next()
		if err != nil {
			return err
		}
		switch f {
		case 1:
			id = int64(v)
		case 2:
			err = packed(pbs, func(x uint64) { keys = append(keys, x) })
		case 3:
			err = packed(pbs, func(x uint64) { vals = append(vals, x) })
		case 8:
			err = packed(pbs, func(x uint64) { roles = append(roles, x) })
		case 9:
			var acc int64
			err = packed(pbs, func(x uint64) { acc += zigzag(x); ids = append(ids, acc) })
		case 10:
			err = packed(pbs, func(x uint64) { types = append(types, x) })
		}
		if err != nil {
			return err
		}
	}
	if s.relation == nil || len(keys) != len(vals) || len(roles) != len(ids) || len(types) != len(ids) {
		return nil
	}
	ms := make([]member, len(ids))
	for i := range ids {
		ms[i] = member{typ: uint8(min(types[i], 3)), id: ids[i], role: b.str(roles[i])}
	}
	s.relation(id, ms, b.tags(keys, vals))
	return nil
}
