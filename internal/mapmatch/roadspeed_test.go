package mapmatch

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// TestRoadSpeedTiesPlaces: along a 2 km street of 50 km/h cut into
// ways of 100 m (as OSM cuts a street where a tag changes), vehicles
// cruising at 80 to 100 % of the limit, fixes 5 s apart with 10 m of
// noise and no measured speed, are placed nearer where they were taken,
// and more often on the way they were on, when the smoother reads the
// speed the road's limit leads to expect (speedOr) than without it; a
// vehicle crawling at 3 m/s, far under it, is placed as well as without
// it (the gate leaves the expected speed out).
func TestRoadSpeedTiesPlaces(t *testing.T) {
	h := &handNet{}
	const ways, wayLen = 20, 100.0
	for i := range ways {
		h.road(int64(100+i), i, i+1, 50, [2]float64{float64(i) * wayLen, 0}, [2]float64{float64(i+1) * wayLen, 0})
	}
	with := New(h, routing.Auto, Config{})
	without := New(h, routing.Auto, Config{})
	without.noRoadSpeed = true
	// run drives at speed(rng) m/s: the mean error along the road and
	// the share of fixes on the right way
	run := func(m *Matcher, speed func(*rand.Rand) float64) (float64, float64) {
		rng := rand.New(rand.NewPCG(3, 5))
		var errSum float64
		fixes, right := 0, 0
		for range 60 {
			v := speed(rng)
			x, tm := 50+150*rng.Float64(), 0.0
			var pts []Point
			var truth []float64
			for x < ways*wayLen-100 {
				lat, lon := toLatLon(x+10*rng.NormFloat64(), 10*rng.NormFloat64())
				pts, truth = append(pts, Point{Lat: lat, Lon: lon, Accuracy: 10, Time: 1.8e9 + tm}), append(truth, x)
				x, tm = x+5*v, tm+5
			}
			tr := m.Trace()
			var out []Match
			for _, p := range pts {
				out = append(out, tr.Add(p)...)
			}
			out = append(out, tr.Flush()...)
			for _, mt := range out {
				px, _ := h.xy(mt)
				errSum += math.Abs(px - truth[mt.Index])
				fixes++
				if mt.WayID == int64(100+int(truth[mt.Index]/wayLen)) {
					right++
				}
			}
		}
		return errSum / float64(fixes), float64(right) / float64(fixes)
	}
	cruise := func(rng *rand.Rand) float64 { return (0.8 + 0.2*rng.Float64()) * 50 / 3.6 }
	ew, rw := run(with, cruise)
	eo, ro := run(without, cruise)
	t.Logf("cruising: %.2f m off along the road, %.1f%% on the right way; without the road's speed %.2f m, %.1f%%", ew, 100*rw, eo, 100*ro)
	if !(ew < 0.95*eo) || !(rw > ro) {
		t.Errorf("cruising: %.2f m off along the road and %.1f%% on the right way with the road's speed, %.2f m and %.1f%% without", ew, 100*rw, eo, 100*ro)
	}
	crawl := func(*rand.Rand) float64 { return 3 }
	ew, _ = run(with, crawl)
	eo, _ = run(without, crawl)
	t.Logf("crawling: %.2f m off along the road; without the road's speed %.2f m", ew, eo)
	if ew > 1.02*eo {
		t.Errorf("crawling at 3 m/s: %.2f m off along the road with the road's speed, %.2f m without", ew, eo)
	}
}
