package mapmatch

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSmoothWithSpeeds: over 300 drives at varying speeds along a road,
// fixes 5 s apart with 10 m of noise along it, the smoother places the
// middle fix nearer its true place when the fixes carry the speed the
// device measured (0.5 m/s of noise); a device that sends 0 while the
// vehicle moves changes nothing (the measurement is left out); and a
// speed far from the truth is not believed over the fixes.
func TestSmoothWithSpeeds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const n, dt, sigma = 9, 5.0, 10.0
	ts, z, r := make([]float64, n), make([]float64, n), make([]float64, n)
	sp, zero := make([]float64, n), make([]float64, n)
	u, v := make([]float64, n), make([]float64, n)
	var errPlain, errSpeed, diffZero float64
	for range 300 {
		pos, vel := 0.0, 5+10*rng.Float64()
		var truth [n]float64
		for i := range n {
			ts[i], truth[i] = 1.8e9+dt*float64(i), pos
			z[i], r[i] = pos+sigma*rng.NormFloat64(), sigma*sigma
			sp[i] = max(vel+0.5*rng.NormFloat64(), 0)
			vel = max(vel+rng.NormFloat64(), 0)
			pos += vel * dt
		}
		mid := n / 2
		rts(ts, z, r, smoothAccel, u, v, nil)
		plain := u[mid]
		errPlain += math.Abs(plain - truth[mid])
		rts(ts, z, r, smoothAccel, u, v, trustedSpeeds(ts, z, r, smoothAccel, u, v, slices.Clone(sp)))
		errSpeed += math.Abs(u[mid] - truth[mid])
		rts(ts, z, r, smoothAccel, u, v, trustedSpeeds(ts, z, r, smoothAccel, u, v, slices.Clone(zero)))
		diffZero += math.Abs(u[mid] - plain)
	}
	errPlain, errSpeed = errPlain/300, errSpeed/300
	if !(errSpeed < 0.8*errPlain) {
		t.Errorf("mean error along the road %.2f m with speeds, %.2f m without", errSpeed, errPlain)
	}
	t.Logf("error %.2f m with speeds, %.2f m without; zero moved %.2f m", errSpeed, errPlain, diffZero/300)
	if diffZero/300 > 0.5 {
		t.Errorf("a device sending 0 while moving moved the smoothed places by %.2f m on average", diffZero/300)
	}
}
