package trips

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fleethub/fleethub/internal/geo"
)

// Point is one stored location point. Optional numbers are NaN when
// absent.
type Point struct {
	TS       int64 // unix ms
	Lat, Lon float64
	Speed    float64 // km/h
	Heading  float64
	Accuracy float64
	Altitude float64
	Battery  float64
	Network  uint8 // 0 unknown, 1 wifi, 2 cellular, 3 offline
}

// Time returns the point's timestamp.
func (p Point) Time() time.Time { return time.UnixMilli(p.TS).UTC() }

// pos returns the point's position.
func (p Point) pos() geo.Point { return geo.Point{Lat: p.Lat, Lon: p.Lon} }

// Networks maps network_type values to their codes (responses never name
// the network, so there is no inverse).
var Networks = map[string]uint8{"wifi": 1, "cellular": 2, "offline": 3}

// A block is a version byte then fixed 49-byte records, little endian:
// ts int64, lat float64, lon float64, then float32 speed, heading,
// accuracy, altitude, battery (NaN when absent), then network uint8.
// 1,000 points take 49 KB; decoding is a straight copy.
const (
	blockVersion = 1
	recordSize   = 8 + 8 + 8 + 4*5 + 1
)

var errBlock = errors.New("trips: corrupt point block")

// EncodeBlock encodes points (already in timestamp order).
func EncodeBlock(pts []Point) []byte {
	b := make([]byte, 1, 1+len(pts)*recordSize)
	b[0] = blockVersion
	for _, p := range pts {
		b = binary.LittleEndian.AppendUint64(b, uint64(p.TS))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.Lat))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.Lon))
		for _, f := range [...]float64{p.Speed, p.Heading, p.Accuracy, p.Altitude, p.Battery} {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(f)))
		}
		b = append(b, p.Network)
	}
	return b
}

// DecodeBlock appends the points of a block to out.
func DecodeBlock(b []byte, out []Point) ([]Point, error) {
	if len(b) < 1 || b[0] != blockVersion || (len(b)-1)%recordSize != 0 {
		return out, fmt.Errorf("%w (%d bytes)", errBlock, len(b))
	}
	for i := 1; i < len(b); i += recordSize {
		r := b[i : i+recordSize]
		p := Point{
			TS:  int64(binary.LittleEndian.Uint64(r[0:])),
			Lat: math.Float64frombits(binary.LittleEndian.Uint64(r[8:])),
			Lon: math.Float64frombits(binary.LittleEndian.Uint64(r[16:])),
		}
		f := func(o int) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(r[o:]))) }
		p.Speed, p.Heading, p.Accuracy, p.Altitude, p.Battery = f(24), f(28), f(32), f(36), f(40)
		p.Network = r[44]
		out = append(out, p)
	}
	return out, nil
}

type pointJSON struct {
	TS       int64    `json:"ts"`
	Lat      float64  `json:"lat"`
	Lon      float64  `json:"lon"`
	Speed    *float64 `json:"speed,omitempty"`
	Heading  *float64 `json:"heading,omitempty"`
	Accuracy *float64 `json:"acc,omitempty"`
	Altitude *float64 `json:"alt,omitempty"`
	Battery  *float64 `json:"bat,omitempty"`
	Network  uint8    `json:"net,omitempty"`
}

func nanPtr(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// MarshalJSON writes absent values (NaN) as missing fields.
func (p Point) MarshalJSON() ([]byte, error) {
	return json.Marshal(pointJSON{TS: p.TS, Lat: p.Lat, Lon: p.Lon, Speed: nanPtr(p.Speed), Heading: nanPtr(p.Heading),
		Accuracy: nanPtr(p.Accuracy), Altitude: nanPtr(p.Altitude), Battery: nanPtr(p.Battery), Network: p.Network})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (p *Point) UnmarshalJSON(b []byte) error {
	var j pointJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = Point{TS: j.TS, Lat: j.Lat, Lon: j.Lon, Speed: num(j.Speed), Heading: num(j.Heading), Accuracy: num(j.Accuracy),
		Altitude: num(j.Altitude), Battery: num(j.Battery), Network: j.Network}
	return nil
}
