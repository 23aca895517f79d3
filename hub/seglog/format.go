package seglog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"
)

// A segment file starts with an 8-byte header: "FHSEG", the format
// version, two zero bytes. Records follow as frames:
//
//	u32 length of body | u32 CRC-32C of body | body
//	body: u16 key length | key | u64 offset | i64 time (Unix ns) | data
//
// All integers little-endian. A frame whose length runs past the end of
// the file or whose CRC does not match ends the readable part.
const (
	headerSize  = 8
	frameHeader = 8
	bodyFixed   = 2 + 8 + 8
	// Version is the segment format this package writes and reads.
	Version = 1
	// maxBody bounds a frame's body: a length above it is corruption.
	maxBody = 64 << 20
)

var (
	segMagic = [headerSize]byte{'F', 'H', 'S', 'E', 'G', Version, 0, 0}
	crcTable = crc32.MakeTable(crc32.Castagnoli)

	// errTorn marks the end of the readable frames: a short or
	// corrupt frame.
	errTorn = errors.New("seglog: torn or corrupt frame")
)

// checkHeader verifies a segment header.
func checkHeader(h []byte) error {
	if len(h) < headerSize || string(h[:5]) != "FHSEG" {
		return errors.New("not a fleethub segment (bad magic)")
	}
	if h[5] != Version {
		return fmt.Errorf("segment format version %d, this server reads version %d", h[5], Version)
	}
	return nil
}

// appendFrame encodes a record.
func appendFrame(b []byte, r *Record) []byte {
	n := bodyFixed + len(r.Key) + len(r.Data)
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	b = append(b, 0, 0, 0, 0)
	body := len(b)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(r.Key)))
	b = append(b, r.Key...)
	b = binary.LittleEndian.AppendUint64(b, uint64(r.Offset))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.Time.UnixNano()))
	b = append(b, r.Data...)
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(b[body:], crcTable))
	return b
}

// frame is a decoded frame; Data aliases the body it was decoded from.
type frame struct {
	key    string
	offset int64
	time   time.Time
	data   []byte
}

// decodeBody decodes a frame body whose CRC was checked.
func decodeBody(body []byte) (frame, error) {
	if len(body) < bodyFixed {
		return frame{}, errTorn
	}
	kl := int(binary.LittleEndian.Uint16(body))
	if len(body) < bodyFixed+kl {
		return frame{}, errTorn
	}
	p := 2 + kl
	return frame{
		key:    string(body[2:p]),
		offset: int64(binary.LittleEndian.Uint64(body[p:])),
		time:   time.Unix(0, int64(binary.LittleEndian.Uint64(body[p+8:]))),
		data:   body[p+16:],
	}, nil
}

// frameReader reads frames from a segment's records.
type frameReader struct {
	r    io.Reader
	hdr  [frameHeader]byte
	body []byte
	pos  int64 // file position of the next frame
}

// next reads the next frame; it returns io.EOF at a clean end and
// errTorn at a short or corrupt frame. The frame's data is valid until
// the next call.
func (fr *frameReader) next() (frame, int64, error) {
	at := fr.pos
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		if err == io.EOF {
			return frame{}, at, io.EOF
		}
		return frame{}, at, errTorn
	}
	n := binary.LittleEndian.Uint32(fr.hdr[:])
	if n < bodyFixed || n > maxBody {
		return frame{}, at, errTorn
	}
	if cap(fr.body) < int(n) {
		fr.body = make([]byte, n)
	}
	body := fr.body[:n]
	if _, err := io.ReadFull(fr.r, body); err != nil {
		return frame{}, at, errTorn
	}
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(fr.hdr[4:]) {
		return frame{}, at, errTorn
	}
	f, err := decodeBody(body)
	if err != nil {
		return frame{}, at, err
	}
	fr.pos += frameHeader + int64(n)
	return f, at, nil
}
