package trips

import (
	"fmt"
	"math"
)

// CongestedSegment is a stretch driven well under the trip's cruising speed.
type CongestedSegment struct {
	SegmentID       string  `json:"segment_id"`
	StartKm         float64 `json:"start_km"`
	EndKm           float64 `json:"end_km"`
	CongestionLevel string  `json:"congestion_level" enum:"moderate,heavy" source:"computed"`
	DelayMinutes    float64 `json:"delay_minutes" source:"computed"`
	AverageSpeedKmh float64 `json:"average_speed_kmh" source:"computed"`
}

// PeakHours says whether the trip ran in peak hours.
type PeakHours struct {
	IsPeakHours            bool    `json:"is_peak_hours" doc:"the trip started 07-10 or 16-19 UTC"`
	PeakPeriod             string  `json:"peak_period" enum:"morning,evening,off_peak"`
	AdditionalDelayMinutes float64 `json:"additional_delay_minutes" source:"computed" doc:"the congestion delay of a trip in peak hours, else 0"`
	CongestionFactor       float64 `json:"congestion_factor" source:"computed" doc:"1 + average_congestion_level"`
}

// TrafficAnalysis is derived from the trip's own speeds (no external
// traffic feed): segments far under the cruising speed are congested.
type TrafficAnalysis struct {
	AverageCongestionLevel float64            `json:"average_congestion_level" source:"computed" doc:"0-1: the share of distance driven in congested segments"`
	TrafficDelayMinutes    float64            `json:"traffic_delay_minutes" source:"computed"`
	FuelCostImpactUSD      float64            `json:"fuel_cost_impact_usd" source:"computed" doc:"the delay idling at the vehicle model's rate (0.8 L/h by default, scaled with a profile's consumption, 0 for an electric vehicle) and 1.05 USD/L"`
	CongestedSegments      []CongestedSegment `json:"congested_segments"`
	PeakHoursImpact        PeakHours          `json:"peak_hours_impact"`
	IncidentReports        []any              `json:"incident_reports" source:"unknown" doc:"null: no traffic incident feed is connected"`
}

// traffic finds the stretches driven under half the cruising speed; a
// pause ends a stretch. The delay burns idlePerHour liters an hour.
func traffic(pts []Point, prof profile, cruise, idlePerHour float64) *TrafficAnalysis {
	speeds, cum := prof.speeds, prof.cum
	ta := &TrafficAnalysis{CongestedSegments: []CongestedSegment{}}
	if cruise <= 0 {
		// nothing moved at a speed to compare with: no congestion, and
		// the hours the trip started in are what they are
		ta.PeakHoursImpact = peakHours(pts, ta)
		return ta
	}
	inSeg := -1
	var sumV float64
	var n int
	congestedKm := 0.0
	flush := func(end int) {
		if inSeg < 0 {
			return
		}
		avg := sumV / float64(n)
		km := cum[end] - cum[inSeg]
		if km > 0.05 {
			level := "moderate"
			if avg < cruise*0.25 {
				level = "heavy"
			}
			delay := km/math.Max(avg, 1)*60 - km/cruise*60
			ta.CongestedSegments = append(ta.CongestedSegments, CongestedSegment{SegmentID: fmt.Sprintf("seg_%d", len(ta.CongestedSegments)+1),
				StartKm: round(cum[inSeg], 3), EndKm: round(cum[end], 3), CongestionLevel: level, DelayMinutes: round(math.Max(0, delay), 2), AverageSpeedKmh: round(avg, 1)})
			ta.TrafficDelayMinutes += math.Max(0, delay)
			congestedKm += km
		}
		inSeg, sumV, n = -1, 0, 0
	}
	for i := 1; i < len(pts); i++ {
		v := speeds[i]
		if prof.across[i] {
			flush(i - 1)
			continue
		}
		if v > 5 && v < cruise*0.5 {
			if inSeg < 0 {
				inSeg = i - 1
			}
			sumV += v
			n++
		} else {
			flush(i - 1)
		}
	}
	flush(len(pts) - 1)
	if cum[len(cum)-1] > 0 {
		ta.AverageCongestionLevel = round(congestedKm/cum[len(cum)-1], 2)
	}
	ta.TrafficDelayMinutes = round(ta.TrafficDelayMinutes, 2)
	ta.FuelCostImpactUSD = round(ta.TrafficDelayMinutes/60*idlePerHour*fuelUSDPerLiter, 2)
	ta.PeakHoursImpact = peakHours(pts, ta)
	return ta
}

// peakHours places the trip's first point in the peak hours (07-10 and
// 16-19 UTC) and carries ta's congestion over to them.
func peakHours(pts []Point, ta *TrafficAnalysis) PeakHours {
	ph := PeakHours{CongestionFactor: round(1+ta.AverageCongestionLevel, 2), PeakPeriod: "off_peak"}
	if len(pts) == 0 {
		return ph
	}
	switch h := pts[0].Time().Hour(); {
	case h >= 7 && h < 10:
		ph.IsPeakHours, ph.PeakPeriod = true, "morning"
	case h >= 16 && h < 19:
		ph.IsPeakHours, ph.PeakPeriod = true, "evening"
	}
	if ph.IsPeakHours {
		ph.AdditionalDelayMinutes = ta.TrafficDelayMinutes
	}
	return ph
}
