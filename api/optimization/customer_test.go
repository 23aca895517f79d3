package optimization_test

import (
	"fmt"
	"testing"
)

// TestCustomerOnItsStop: a destination's customer_id comes back on its
// delivery entry of route_sequence, and a destination without one has
// none; depot entries carry none.
func TestCustomerOnItsStop(t *testing.T) {
	url := serve(t, nil)
	body := grid(4, 2, 10)
	want := map[string]any{}
	for i, d := range body["destinations"].([]map[string]any) {
		if i == 2 {
			continue
		}
		c := fmt.Sprintf("cust-%d", i)
		d["customer_id"] = c
		want[d["destination_id"].(string)] = c
	}
	st, res := post(t, url, body)
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	seen := 0
	for _, r := range res["data"].(map[string]any)["optimized_routes"].([]any) {
		for _, s := range r.(map[string]any)["route_sequence"].([]any) {
			stop := s.(map[string]any)
			if stop["activity_type"] != "delivery" {
				if c, ok := stop["customer_id"]; ok {
					t.Errorf("%v entry has customer_id %v", stop["activity_type"], c)
				}
				continue
			}
			seen++
			id := stop["destination_id"].(string)
			if c, ok := stop["customer_id"]; c != want[id] || ok != (want[id] != nil) {
				t.Errorf("%s: customer_id %v (present %v), want %v", id, c, ok, want[id])
			}
		}
	}
	if seen != 4 {
		t.Fatalf("%d deliveries, want 4", seen)
	}
}
