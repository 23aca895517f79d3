package event

import (
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Points travel by the thousand: they encode as a flat msgpack array
// instead of a reflected map, about ten times faster (BenchmarkPointsCodec).
var (
	_ msgpack.CustomEncoder = (*Point)(nil)
	_ msgpack.CustomDecoder = (*Point)(nil)
)

// EncodeMsgpack writes p as [trip, vehicle, driver, org, env, unix_ms,
// lat, lon, speed|nil, heading|nil, accuracy|nil].
func (p *Point) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(11); err != nil {
		return err
	}
	for _, s := range [...]string{p.TripID, p.VehicleID, p.DriverID, p.Org, p.Env} {
		if err := enc.EncodeString(s); err != nil {
			return err
		}
	}
	if err := enc.EncodeInt(p.Timestamp.UnixMilli()); err != nil {
		return err
	}
	if err := enc.EncodeFloat64(p.Latitude); err != nil {
		return err
	}
	if err := enc.EncodeFloat64(p.Longitude); err != nil {
		return err
	}
	for _, f := range [...]*float64{p.SpeedKmh, p.Heading, p.Accuracy} {
		var err error
		if f == nil {
			err = enc.EncodeNil()
		} else {
			err = enc.EncodeFloat64(*f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// DecodeMsgpack reads what EncodeMsgpack wrote.
func (p *Point) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 11 {
		return fmt.Errorf("event: point has %d fields, want 11", n)
	}
	for _, dst := range [...]*string{&p.TripID, &p.VehicleID, &p.DriverID, &p.Org, &p.Env} {
		if *dst, err = dec.DecodeString(); err != nil {
			return err
		}
	}
	ms, err := dec.DecodeInt64()
	if err != nil {
		return err
	}
	p.Timestamp = time.UnixMilli(ms).UTC()
	if p.Latitude, err = dec.DecodeFloat64(); err != nil {
		return err
	}
	if p.Longitude, err = dec.DecodeFloat64(); err != nil {
		return err
	}
	for _, dst := range [...]**float64{&p.SpeedKmh, &p.Heading, &p.Accuracy} {
		v, err := dec.DecodeInterface()
		if err != nil {
			return err
		}
		switch x := v.(type) {
		case nil:
			*dst = nil
		case float64:
			*dst = &x
		default:
			return fmt.Errorf("event: point number of type %T", v)
		}
	}
	return nil
}
