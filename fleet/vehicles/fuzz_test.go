package vehicles

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// FuzzValidateBody feeds arbitrary bodies to the profile validator (PUT
// /v1/vehicles/{id}): it never panics, and a body it accepts has every
// figure within its bounds, a fuel type with any figure, no liters or tank
// for an electric vehicle and no kWh (consumption or battery) for any other.
func FuzzValidateBody(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b Body
		if json.Unmarshal(raw, &b) != nil {
			return
		}
		bad := map[string]string{}
		b.validate(bad)
		if len(bad) > 0 {
			return
		}
		in := func(v *float64, lo, hi float64) bool { return v == nil || (*v >= lo && *v <= hi && !math.IsNaN(*v)) }
		figures := b.FuelConsumptionLPer100Km != nil || b.EnergyConsumptionKWhPer100Km != nil || b.TankCapacityLiters != nil || b.BatteryCapacityKWh != nil
		electric := b.FuelType == "electric"
		switch {
		case !in(b.FuelConsumptionLPer100Km, MinLitersPer100Km, MaxLitersPer100Km),
			!in(b.EnergyConsumptionKWhPer100Km, MinKWhPer100Km, MaxKWhPer100Km),
			!in(b.TankCapacityLiters, MinTankLiters, MaxTankLiters),
			!in(b.BatteryCapacityKWh, MinBatteryKWh, MaxBatteryKWh):
			t.Fatalf("accepted a figure out of bounds: %+v", b)
		case figures && b.FuelType == "":
			t.Fatalf("accepted figures without a fuel type: %+v", b)
		case electric && (b.FuelConsumptionLPer100Km != nil || b.TankCapacityLiters != nil),
			!electric && (b.EnergyConsumptionKWhPer100Km != nil || b.BatteryCapacityKWh != nil):
			t.Fatalf("accepted figures of another fuel type: %+v", b)
		}
		if p := b.profile("v", time.Time{}, time.Time{}); p.OdometerUnit != "km" && p.OdometerUnit != "mi" {
			t.Fatalf("odometer unit %q", p.OdometerUnit)
		}
	})
}
