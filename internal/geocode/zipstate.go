package geocode

import "sort"

// zip3 are the first ZIP prefixes of each state's ranges (USPS), in order:
// a prefix belongs to the last range starting at or below it.
var zip3 = []struct {
	from  int
	state string
}{
	{5, "NY"}, {6, "PR"}, {8, "VI"}, {9, "PR"}, {10, "MA"}, {28, "RI"}, {30, "NH"}, {39, "ME"}, {50, "VT"}, {55, "MA"}, {56, "VT"},
	{60, "CT"}, {70, "NJ"}, {90, ""}, {100, "NY"}, {150, "PA"}, {197, "DE"}, {200, "DC"}, {201, "VA"}, {202, "DC"}, {206, "MD"},
	{220, "VA"}, {247, "WV"}, {270, "NC"}, {290, "SC"}, {300, "GA"}, {320, "FL"}, {340, ""}, {341, "FL"}, {350, "AL"}, {370, "TN"},
	{386, "MS"}, {398, "GA"}, {400, "KY"}, {428, ""}, {430, "OH"}, {460, "IN"}, {480, "MI"}, {500, "IA"}, {529, ""}, {530, "WI"},
	{550, "MN"}, {568, ""}, {569, "DC"}, {570, "SD"}, {578, ""}, {580, "ND"}, {589, ""}, {590, "MT"}, {600, "IL"}, {630, "MO"},
	{659, ""}, {660, "KS"}, {680, "NE"}, {694, ""}, {700, "LA"}, {715, ""}, {716, "AR"}, {730, "OK"}, {733, "TX"}, {734, "OK"},
	{750, "TX"}, {800, "CO"}, {817, ""}, {820, "WY"}, {832, "ID"}, {839, ""}, {840, "UT"}, {848, ""}, {850, "AZ"}, {866, ""},
	{870, "NM"}, {885, "TX"}, {886, ""}, {889, "NV"}, {899, ""}, {900, "CA"}, {962, ""}, {967, "HI"}, {969, "GU"}, {970, "OR"},
	{980, "WA"}, {995, "AK"},
}

// zipState is the state of a five-digit ZIP by its first three digits, or
// "" when it is not one.
func zipState(zip string) string {
	if len(zip) < 5 {
		return ""
	}
	p := 0
	for i := range 3 {
		if !isDigit(zip[i]) {
			return ""
		}
		p = p*10 + int(zip[i]-'0')
	}
	i := sort.Search(len(zip3), func(i int) bool { return zip3[i].from > p }) - 1
	if i < 0 {
		return ""
	}
	return zip3[i].state
}
