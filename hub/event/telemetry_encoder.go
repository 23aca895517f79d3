package event

import (
	"encoding/binary"
	"math"
	"time"
)

// TelemetryEncoder writes telemetry envelopes in the wire format of
// Marshal (a msgpack map per struct, keyed by the msgpack tags, numbers
// of data as float64), without reflection and without building the
// message first: the intake validates a request's JSON and writes each
// message as it reads it. Many envelopes go into one buffer, one
// allocation per request instead of several per message.
//
// An envelope is Begin, then its fields in any order (each at most
// once), then End. Maps and arrays whose length is not known in advance
// take a one-byte header that is widened when they grow past 15 entries.
// The zero value is ready to use.
type TelemetryEncoder struct {
	buf   []byte
	start int // offset of the envelope in progress

	// the open maps and arrays: offset of the header and entries so far
	tel, data, group, codes     int
	telN, dataN, groupN, codesN int
	hasSeq                      bool
}

// NewTelemetryEncoder returns an encoder whose buffer starts with room
// for size bytes.
func NewTelemetryEncoder(size int) *TelemetryEncoder {
	return &TelemetryEncoder{buf: make([]byte, 0, size)}
}

// Begin starts a telemetry envelope of a tenant.
func (w *TelemetryEncoder) Begin(org, env string) {
	w.start = len(w.buf)
	b := append(w.buf, fixMap|5)
	b = appendStr(appendStr(b, "o"), org)
	b = appendStr(appendStr(b, "e"), env)
	b = appendStr(appendStr(b, "k"), KindTelemetry)
	b = appendStr(b, "t")
	w.tel, w.telN, w.hasSeq = len(b), 0, false
	w.buf = append(b, fixMap)
}

// Timestamp writes the message's timestamp.
func (w *TelemetryEncoder) Timestamp(t time.Time) {
	w.buf = appendTime(appendStr(w.buf, "timestamp"), t)
	w.telN++
}

// VehicleID writes the vehicle id.
func (w *TelemetryEncoder) VehicleID(id []byte) {
	w.buf = appendStrBytes(appendStr(w.buf, "vehicle_id"), id)
	w.telN++
}

// DataType writes the data type.
func (w *TelemetryEncoder) DataType(dt string) {
	w.buf = appendStr(appendStr(w.buf, "data_type"), dt)
	w.telN++
}

// Sequence writes the sequence; End writes 0 when it was not given.
func (w *TelemetryEncoder) Sequence(n int64) {
	w.buf = appendInt64(appendStr(w.buf, "sequence"), n)
	w.telN++
	w.hasSeq = true
}

// Quality writes quality_indicators (fields that are nil or "" are left
// out, as Marshal does).
func (w *TelemetryEncoder) Quality(signal, completeness *float64, health []byte) {
	b := appendStr(w.buf, "quality_indicators")
	n := 0
	for _, present := range [...]bool{signal != nil, completeness != nil, len(health) > 0} {
		if present {
			n++
		}
	}
	b = append(b, fixMap|byte(n))
	if signal != nil {
		b = appendFloat(appendStr(b, "signal_strength"), *signal)
	}
	if completeness != nil {
		b = appendFloat(appendStr(b, "data_completeness"), *completeness)
	}
	if len(health) > 0 {
		b = appendStrBytes(appendStr(b, "sensor_health"), health)
	}
	w.buf = b
	w.telN++
}

// BeginData opens the data map; BeginGroup opens a group in it, and the
// field writers add to the open group.
func (w *TelemetryEncoder) BeginData() {
	b := appendStr(w.buf, "data")
	w.data, w.dataN = len(b), 0
	w.buf = append(b, fixMap)
	w.telN++
}

// BeginGroup opens a group of the data map.
func (w *TelemetryEncoder) BeginGroup(name []byte) {
	b := appendStrBytes(w.buf, name)
	w.group, w.groupN = len(b), 0
	w.buf = append(b, fixMap)
	w.dataN++
}

// Number writes a numeric field of the open group.
func (w *TelemetryEncoder) Number(name []byte, f float64) {
	w.buf = appendFloat(appendStrBytes(w.buf, name), f)
	w.groupN++
}

// Bool writes a boolean field of the open group.
func (w *TelemetryEncoder) Bool(name []byte, v bool) {
	c := byte(0xc2)
	if v {
		c = 0xc3
	}
	w.buf = append(appendStrBytes(w.buf, name), c)
	w.groupN++
}

// Text writes a string field of the open group.
func (w *TelemetryEncoder) Text(name, s []byte) {
	w.buf = appendStrBytes(appendStrBytes(w.buf, name), s)
	w.groupN++
}

// BeginCodes opens an array of strings in the open group; Code adds to
// it.
func (w *TelemetryEncoder) BeginCodes(name []byte) {
	b := appendStrBytes(w.buf, name)
	w.codes, w.codesN = len(b), 0
	w.buf = append(b, fixArray)
	w.groupN++
}

// Code adds a string to the open array.
func (w *TelemetryEncoder) Code(s []byte) {
	w.buf = appendStrBytes(w.buf, s)
	w.codesN++
}

// EndCodes closes the open array.
func (w *TelemetryEncoder) EndCodes() {
	w.setLen(w.codes, w.codesN, fixArray, array16)
}

// EndGroup closes the open group.
func (w *TelemetryEncoder) EndGroup() {
	w.setLen(w.group, w.groupN, fixMap, map16)
}

// EndData closes the data map.
func (w *TelemetryEncoder) EndData() {
	w.setLen(w.data, w.dataN, fixMap, map16)
}

// End finishes the envelope with its ingestion time and returns it; the
// slice is the encoder's and stays valid, unchanged, for the encoder's
// life (later envelopes are appended after it, and a grown buffer is a
// new array).
func (w *TelemetryEncoder) End(ingestedAt time.Time) []byte {
	if !w.hasSeq {
		w.Sequence(0)
	}
	w.setLen(w.tel, w.telN, fixMap, map16)
	w.buf = appendTime(appendStr(w.buf, "i"), ingestedAt)
	return w.buf[w.start:len(w.buf):len(w.buf)]
}

// Append copies b into the buffer and returns the copy, for bytes that
// should share the buffer's allocation (a message's key).
func (w *TelemetryEncoder) Append(b []byte) []byte {
	at := len(w.buf)
	w.buf = append(w.buf, b...)
	return w.buf[at:len(w.buf):len(w.buf)]
}

// setLen writes the length n into the one-byte header at offset at,
// widening it to three bytes past 15 entries.
func (w *TelemetryEncoder) setLen(at, n int, fix, wide byte) {
	if n < 16 {
		w.buf[at] = fix | byte(n)
		return
	}
	// n is bounded by the intake's limits, far below 65,536
	w.buf = append(w.buf, 0, 0)
	copy(w.buf[at+3:], w.buf[at+1:len(w.buf)-2])
	w.buf[at] = wide
	binary.BigEndian.PutUint16(w.buf[at+1:], uint16(n))
	// offsets of headers opened after at move with their content; only
	// an enclosing header (before at) can still be patched, so none of
	// the saved offsets need moving
}

// msgpack codes written here.
const (
	fixMap   = 0x80
	fixArray = 0x90
	fixStr   = 0xa0
	str8     = 0xd9
	str16    = 0xda
	str32    = 0xdb
	array16  = 0xdc
	map16    = 0xde
	float64c = 0xcb
	int64c   = 0xd3
	fixExt4  = 0xd6
	fixExt8  = 0xd7
	ext8     = 0xc7
	timeExt  = 0xff // extension type -1
)

func appendStrLen(b []byte, n int) []byte {
	switch {
	case n < 32:
		return append(b, fixStr|byte(n))
	case n < 256:
		return append(b, str8, byte(n))
	case n <= math.MaxUint16:
		return append(b, str16, byte(n>>8), byte(n))
	}
	return binary.BigEndian.AppendUint32(append(b, str32), uint32(n))
}

func appendStr(b []byte, s string) []byte { return append(appendStrLen(b, len(s)), s...) }

func appendStrBytes(b, s []byte) []byte { return append(appendStrLen(b, len(s)), s...) }

func appendFloat(b []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, float64c), math.Float64bits(f))
}

func appendInt64(b []byte, n int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, int64c), uint64(n))
}

// appendTime writes the msgpack timestamp extension as the msgpack
// library does: 4 bytes of seconds, 8 of nanoseconds and seconds, or 12.
func appendTime(b []byte, t time.Time) []byte {
	secs := uint64(t.Unix())
	if secs>>34 == 0 {
		data := uint64(t.Nanosecond())<<34 | secs
		if data&0xffffffff00000000 == 0 {
			return binary.BigEndian.AppendUint32(append(b, fixExt4, timeExt), uint32(data))
		}
		return binary.BigEndian.AppendUint64(append(b, fixExt8, timeExt), data)
	}
	b = binary.BigEndian.AppendUint32(append(b, ext8, 12, timeExt), uint32(t.Nanosecond()))
	return binary.BigEndian.AppendUint64(b, secs)
}
