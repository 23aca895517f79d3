package bench

import (
	"context"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

// The telemetry generator sends what a fleet gateway would: each request
// carries the latest readings of many vehicles, in the mix of data types
// their reporting periods give: vehicle dynamics every 1-5 s and GPS
// every 1-30 s dominate, engine diagnostics every 5-30 s, fuel every
// 10-60 s, electrical and environmental every few minutes, driver
// behaviour and maintenance indicators when something happens. Values move from message to
// message; now and then a vehicle's diagnostic trouble code count rises
// or its coolant runs hot, so the maintenance rules raise an event.
//
// Numbers are written in fixed point with integer appends: the generator
// shares the machine's cores with the server, so its own cost counts
// against the figure it reports.

// telemetryMix is the share, per 1,000 messages, of each data type.
var telemetryMix = [...]struct {
	dataType string
	perMille int
}{
	{"vehicle_dynamics", 450},
	{"gps_enhanced", 250},
	{"engine_diagnostics", 120},
	{"fuel_system", 70},
	{"electrical_system", 40},
	{"environmental", 30},
	{"driver_behavior", 30},
	{"maintenance_indicators", 10},
}

// benchVehicle is the generator's picture of one vehicle.
type benchVehicle struct {
	id      []byte
	seq     int64
	dtc     int64
	mil     bool
	lat     float64
	lon     float64
	speed   float64 // km/h
	fuel    float64 // percent
	coolant float64 // °C
	odoKm   float64
}

// telemetryWorker builds the requests of one connection over its own
// vehicles, so workers share nothing.
type telemetryWorker struct {
	rng      uint64
	vehicles []benchVehicle
	next     int
	buf      []byte
}

func (g *telemetryWorker) rand() uint64 {
	// xorshift64*
	g.rng ^= g.rng >> 12
	g.rng ^= g.rng << 25
	g.rng ^= g.rng >> 27
	return g.rng * 2685821657736338717
}

// uniform returns a number in [lo, hi).
func (g *telemetryWorker) uniform(lo, hi float64) float64 {
	return lo + (hi-lo)*float64(g.rand()>>11)/(1<<53)
}

// chance reports true once in n.
func (g *telemetryWorker) chance(n uint64) bool { return g.rand()%n == 0 }

// Telemetry drives POST /v1/telemetry with batches of Batch messages
// (default 1,000, at most 1,000) over Trips vehicles (default 256), in
// the mix of data types of telemetryMix.
func Telemetry(ctx context.Context, cfg IngestConfig) (*Result, error) {
	cfg.defaults()
	if cfg.Trips == 0 {
		cfg.Trips = 256
	}
	if cfg.Trips < cfg.Conns {
		cfg.Trips = cfg.Conns
	}
	if cfg.Batch <= 0 || cfg.Batch > 1000 {
		cfg.Batch = 1000
	}
	run0 := time.Now().Unix()
	per := cfg.Trips / cfg.Conns
	workers := make([]*telemetryWorker, cfg.Conns)
	for w := range workers {
		g := &telemetryWorker{rng: uint64(run0)*1_000_003 + uint64(w)*7919 + 1, vehicles: make([]benchVehicle, per)}
		for i := range g.vehicles {
			v := &g.vehicles[i]
			v.id = strconv.AppendInt([]byte("veh-"), run0%100000, 10)
			v.id = append(v.id, '-')
			v.id = strconv.AppendInt(v.id, int64(w*per+i), 10)
			v.lat, v.lon = g.uniform(39.8, 40.1), g.uniform(-83.2, -82.8)
			v.speed, v.fuel, v.coolant, v.odoKm = g.uniform(0, 110), g.uniform(20, 100), g.uniform(80, 95), g.uniform(5000, 250000)
		}
		workers[w] = g
	}
	url := cfg.URL + "/v1/telemetry"
	return run(ctx, "telemetry", cfg.Config, func(w, i int, req *fasthttp.Request) int {
		b := workers[w].request(cfg.Batch, time.Now().UTC())
		jsonPOST(req, url, b)
		return cfg.Batch
	}, func(st int) bool { return st == 202 })
}

// request builds one body of n messages read up to now: the vehicles take
// turns, and a vehicle's messages of one request are a few milliseconds
// apart, oldest first.
func (g *telemetryWorker) request(n int, now time.Time) []byte {
	b := append(g.buf[:0], `{"messages":[`...)
	for j := range n {
		if j > 0 {
			b = append(b, ',')
		}
		v := &g.vehicles[g.next]
		g.next = (g.next + 1) % len(g.vehicles)
		v.seq++
		pick, dataType := int(g.rand()%1000), telemetryMix[0].dataType
		for _, m := range telemetryMix {
			if pick < m.perMille {
				dataType = m.dataType
				break
			}
			pick -= m.perMille
		}
		at := now.Add(-time.Duration(n-j) * time.Millisecond)
		b = append(b, `{"timestamp":"`...)
		b = at.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
		b = append(b, `","vehicle_id":"`...)
		b = append(b, v.id...)
		b = append(b, `","data_type":"`...)
		b = append(b, dataType...)
		b = append(b, `","sequence":`...)
		b = strconv.AppendInt(b, v.seq, 10)
		b = append(b, `,"data":`...)
		b = g.data(b, v, dataType)
		if !g.chance(10) {
			b = append(b, `,"quality_indicators":{"signal_strength":`...)
			b = strconv.AppendInt(b, int64(60+g.rand()%41), 10)
			b = append(b, `,"data_completeness":`...)
			b = fixed(b, g.uniform(95, 100), 1)
			if g.chance(4) {
				b = append(b, `,"sensor_health":"good"`...)
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	g.buf = b
	return b
}

// data appends the data object of one message and moves the vehicle on.
func (g *telemetryWorker) data(b []byte, v *benchVehicle, dataType string) []byte {
	v.speed = min(130, max(0, v.speed+g.uniform(-4, 4)))
	v.lat += g.uniform(-1, 1) * 1e-4
	v.lon += g.uniform(-1, 1) * 1e-4
	v.odoKm += v.speed / 3600
	switch dataType {
	case "vehicle_dynamics":
		return g.dynamics(b, v)
	case "gps_enhanced":
		return g.gps(b, v)
	case "engine_diagnostics":
		return g.engine(b, v)
	case "fuel_system":
		return g.fuel(b, v)
	case "electrical_system":
		return g.electrical(b)
	case "environmental":
		return g.environment(b)
	case "driver_behavior":
		return g.driver(b)
	default: // maintenance_indicators
		return g.maintenance(b, v)
	}
}

// dynamics appends the vehicle_dynamics data: motion, braking and
// steering, and now and then tires and suspension.
func (g *telemetryWorker) dynamics(b []byte, v *benchVehicle) []byte {
	b = append(b, `{"motion":{"speed_kmh":`...)
	b = fixed(b, v.speed, 1)
	b = append(b, `,"speed_mph":`...)
	b = fixed(b, v.speed*0.621371, 1)
	b = field(b, "acceleration_x", g.uniform(-0.4, 0.4), 3)
	b = field(b, "acceleration_y", g.uniform(-0.3, 0.3), 3)
	b = field(b, "acceleration_z", g.uniform(0.95, 1.05), 3)
	b = field(b, "angular_velocity_z", g.uniform(-0.5, 0.5), 3)
	brake := 0.0
	if g.chance(5) {
		brake = g.uniform(5, 60)
	}
	b = append(b, `},"braking":{"brake_pedal_position":`...)
	b = fixed(b, brake, 1)
	b = field(b, "brake_pressure", brake*12, 1)
	b = append(b, `,"abs_active":`...)
	b = strconv.AppendBool(b, brake > 55)
	b = field(b, "brake_temp_front", g.uniform(60, 180), 0)
	b = field(b, "brake_temp_rear", g.uniform(50, 150), 0)
	b = append(b, `},"steering":{"steering_angle":`...)
	b = fixed(b, g.uniform(-30, 30), 1)
	b = field(b, "steering_rate", g.uniform(-10, 10), 1)
	b = append(b, '}')
	if g.chance(3) {
		b = append(b, `,"tires":{"pressure_fl":`...)
		b = fixed(b, g.uniform(32, 36), 1)
		b = field(b, "pressure_fr", g.uniform(32, 36), 1)
		b = field(b, "pressure_rl", g.uniform(32, 36), 1)
		b = field(b, "pressure_rr", g.uniform(32, 36), 1)
		b = field(b, "temp_fl", g.uniform(25, 55), 0)
		b = field(b, "temp_fr", g.uniform(25, 55), 0)
		b = field(b, "temp_rl", g.uniform(25, 55), 0)
		b = field(b, "temp_rr", g.uniform(25, 55), 0)
		b = append(b, `},"suspension":{"ride_height_front":`...)
		b = fixed(b, g.uniform(175, 185), 1)
		b = field(b, "ride_height_rear", g.uniform(180, 190), 1)
		b = append(b, `,"stability_control_active":`...)
		b = strconv.AppendBool(b, g.chance(50))
		b = append(b, '}')
	}
	return append(b, '}')
}

// gps appends the gps_enhanced data at the vehicle's position.
func (g *telemetryWorker) gps(b []byte, v *benchVehicle) []byte {
	b = append(b, `{"position":{"latitude":`...)
	b = fixed(b, v.lat, 6)
	b = field(b, "longitude", v.lon, 6)
	b = field(b, "altitude_m", g.uniform(200, 320), 1)
	b = field(b, "heading", g.uniform(0, 360), 1)
	b = field(b, "speed_kmh", v.speed, 1)
	b = append(b, `},"quality":{"hdop":`...)
	b = fixed(b, g.uniform(0.6, 2.5), 1)
	b = append(b, `,"satellites":`...)
	b = strconv.AppendInt(b, int64(6+g.rand()%9), 10)
	return append(b, "}}"...)
}

// engine appends the engine_diagnostics data; now and then a trouble
// code appears or clears, or the coolant runs hot.
func (g *telemetryWorker) engine(b []byte, v *benchVehicle) []byte {
	switch {
	case g.chance(400):
		v.dtc++
		v.mil = v.dtc >= 3
	case v.dtc > 0 && g.chance(200): // repaired: codes cleared
		v.dtc, v.mil = 0, false
	}
	v.coolant = 90 + 0.9*(v.coolant-90) + g.uniform(-1.5, 1.5)
	if g.chance(2000) {
		v.coolant = 112
	}
	rpm := 700 + v.speed*22 + g.uniform(-50, 50)
	b = append(b, `{"engine":{"rpm":`...)
	b = fixed(b, rpm, 0)
	b = field(b, "load_percentage", g.uniform(10, 80), 1)
	b = field(b, "coolant_temp", v.coolant, 1)
	b = field(b, "oil_pressure", g.uniform(30, 60), 1)
	b = field(b, "oil_temp", v.coolant+g.uniform(2, 10), 1)
	b = field(b, "throttle_position", g.uniform(0, 60), 1)
	b = append(b, `},"turbo":{"boost_pressure":`...)
	b = fixed(b, g.uniform(0, 20), 1)
	b = field(b, "turbo_rpm", rpm*40, 0)
	if g.chance(2) {
		b = append(b, `},"exhaust":{"egr_valve_position":`...)
		b = fixed(b, g.uniform(5, 30), 1)
		b = field(b, "exhaust_temp", g.uniform(250, 550), 0)
		b = field(b, "nox_level", g.uniform(50, 200), 0)
	}
	b = append(b, `},"status_codes":{"dtc_count":`...)
	b = strconv.AppendInt(b, v.dtc, 10)
	b = append(b, `,"mil_status":`...)
	b = strconv.AppendBool(b, v.mil)
	b = append(b, `,"pending_codes":[`...)
	for k := range min(v.dtc, 3) {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `"P0`...)
		b = strconv.AppendInt(b, 300+k*17, 10)
		b = append(b, '"')
	}
	b = append(b, `],"readiness_status":"complete"}}`...)
	return b
}

// fuel appends the fuel_system data, the tank draining slowly.
func (g *telemetryWorker) fuel(b []byte, v *benchVehicle) []byte {
	v.fuel = max(5, v.fuel-g.uniform(0, 0.05))
	b = append(b, `{"fuel_level":{"percentage":`...)
	b = fixed(b, v.fuel, 1)
	b = field(b, "liters", v.fuel*0.8, 1)
	b = field(b, "range_remaining", v.fuel*6.5, 0)
	b = append(b, `},"consumption":{"instant_mpg":`...)
	b = fixed(b, g.uniform(8, 40), 1)
	b = field(b, "average_mpg", g.uniform(20, 30), 1)
	b = field(b, "fuel_rate_lph", g.uniform(1, 20), 2)
	b = append(b, `},"efficiency_metrics":{"efficiency_score":`...)
	b = fixed(b, g.uniform(50, 100), 0)
	b = field(b, "eco_driving_score", g.uniform(50, 100), 0)
	return append(b, "}}"...)
}

// electrical appends the electrical_system data.
func (g *telemetryWorker) electrical(b []byte) []byte {
	b = append(b, `{"battery":{"voltage":`...)
	b = fixed(b, g.uniform(12.2, 14.4), 2)
	b = field(b, "current", g.uniform(-5, 40), 1)
	b = field(b, "state_of_charge", g.uniform(60, 100), 0)
	b = field(b, "temperature", g.uniform(10, 40), 1)
	b = append(b, `,"cycles":`...)
	b = strconv.AppendInt(b, 300+int64(g.rand()%50), 10)
	b = append(b, `},"charging_system":{"alternator_voltage":`...)
	b = fixed(b, g.uniform(13.8, 14.6), 2)
	b = field(b, "alternator_current", g.uniform(10, 80), 1)
	b = append(b, `,"belt_tension":"normal"},"power_distribution":{"main_bus_voltage":`...)
	b = fixed(b, g.uniform(12, 14), 2)
	b = field(b, "total_load", g.uniform(10, 40), 1)
	return append(b, "}}"...)
}

// environment appends the environmental data.
func (g *telemetryWorker) environment(b []byte) []byte {
	b = append(b, `{"cabin":{"temperature":`...)
	b = fixed(b, g.uniform(17, 26), 1)
	b = field(b, "humidity", g.uniform(20, 70), 0)
	b = field(b, "co2_ppm", g.uniform(400, 1400), 0)
	b = append(b, `},"ambient":{"temperature":`...)
	b = fixed(b, g.uniform(-10, 35), 1)
	b = field(b, "pressure_hpa", g.uniform(990, 1030), 1)
	return append(b, "}}"...)
}

// driver appends the driver_behavior data.
func (g *telemetryWorker) driver(b []byte) []byte {
	b = append(b, `{"scores":{"smoothness":`...)
	b = fixed(b, g.uniform(60, 100), 0)
	b = field(b, "attention", g.uniform(60, 100), 0)
	b = append(b, `},"counts":{"harsh_brakes":`...)
	b = strconv.AppendInt(b, int64(g.rand()%3), 10)
	b = append(b, `,"harsh_accelerations":`...)
	b = strconv.AppendInt(b, int64(g.rand()%2), 10)
	b = append(b, `,"phone_use_seconds":`...)
	b = strconv.AppendInt(b, int64(g.rand()%30), 10)
	return append(b, "}}"...)
}

// maintenance appends the maintenance_indicators data.
func (g *telemetryWorker) maintenance(b []byte, v *benchVehicle) []byte {
	b = append(b, `{"oil_life":{"remaining_percent":`...)
	b = fixed(b, g.uniform(5, 100), 0)
	b = field(b, "km_to_change", g.uniform(0, 15000), 0)
	b = append(b, `},"service":{"odometer_km":`...)
	b = fixed(b, v.odoKm, 1)
	b = field(b, "days_to_due", g.uniform(0, 180), 0)
	return append(b, "}}"...)
}

// field appends ,"name":value.
func field(b []byte, name string, v float64, decimals int) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return fixed(b, v, decimals)
}

var pow10 = [...]int64{1, 10, 100, 1000, 10000, 100000, 1000000}

// fixed appends v with the given decimals (at most 6), dropping trailing
// zeros of the fraction as a device's JSON encoder would.
func fixed(b []byte, v float64, decimals int) []byte {
	p := pow10[decimals]
	n := int64(v*float64(p) + 0.5)
	if v < 0 {
		n = int64(v*float64(p) - 0.5)
		if n < 0 {
			b = append(b, '-')
			n = -n
		}
	}
	whole, frac := n/p, n%p
	b = strconv.AppendInt(b, whole, 10)
	for frac > 0 && frac%10 == 0 {
		frac /= 10
		p /= 10
	}
	if frac == 0 {
		return b
	}
	b = append(b, '.')
	for d := p / 10; d > frac && d > 1; d /= 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, frac, 10)
}
