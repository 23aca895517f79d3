package telemetry

// DocumentedFields lists the groups and fields of each structured data
// type, for the external tests.
func DocumentedFields() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for dt, groups := range newSchema() {
		out[dt] = map[string][]string{}
		for g, fields := range groups {
			out[dt][g] = sortedKeys(fields)
		}
	}
	return out
}
