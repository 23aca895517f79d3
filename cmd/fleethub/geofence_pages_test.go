package main

import (
	"fmt"
	"slices"
	"testing"
)

// TestGeofenceListPages: GET /v1/geofences pages as the vehicle and
// contact listings do: limit 1 to 200 (default 50), next_cursor until
// the last page, every geofence once, oldest first, also when the
// geofence a page ended with is deleted before the next page is asked;
// a cursor the listing did not make, or one of another organization's
// listing, is refused naming cursor.
func TestGeofenceListPages(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	other := n.key("org-b", "test", []string{"all"}, 100000)
	var made []string
	for i := range 5 {
		r := n.do("POST", "/v1/geofences", k, map[string]any{"name": fmt.Sprint("g", i), "type": "circle",
			"center": map[string]any{"latitude": 40, "longitude": -83}, "radius_m": 100})
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		made = append(made, r.json(t)["geofence_id"].(string))
	}
	page := func(key, query string) ([]string, map[string]any) {
		t.Helper()
		r := n.do("GET", "/v1/geofences"+query, key, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		m := r.json(t)
		var ids []string
		for _, g := range m["geofences"].([]any) {
			ids = append(ids, g.(map[string]any)["geofence_id"].(string))
		}
		if m["count"] != float64(len(ids)) {
			t.Errorf("%s: count %v for %d geofences", query, m["count"], len(ids))
		}
		return ids, m["pagination"].(map[string]any)
	}
	all, p := page(k, "")
	if len(all) != 5 || fmt.Sprint(sorted(all)) != fmt.Sprint(sorted(made)) || p["limit"] != 50.0 || p["has_more"] != false || p["next_cursor"] != nil {
		t.Errorf("default page: %v %v, want the 5 and no next page", all, p)
	}
	first, p := page(k, "?limit=2")
	if len(first) != 2 || first[0] != all[0] || first[1] != all[1] || p["has_more"] != true || p["next_cursor"] == nil {
		t.Fatalf("limit 2: %v %v", first, p)
	}
	// the last geofence of the page goes; the next page starts after it
	if r := n.do("DELETE", "/v1/geofences/"+first[1], k, nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	cursor := p["next_cursor"].(string)
	rest, p := page(k, "?limit=2&cursor="+cursor)
	more, p2 := page(k, "?limit=2&cursor="+p["next_cursor"].(string))
	got := append(append(append([]string{}, first...), rest...), more...)
	want := all // creation order; geofences made in one millisecond by id
	if fmt.Sprint(got) != fmt.Sprint(want) || p2["has_more"] != false || p2["next_cursor"] != nil {
		t.Errorf("pages %v then %v (last %v), want %v", first, append(rest, more...), p2, want)
	}

	for _, c := range []struct{ key, query, field string }{
		{k, "?limit=0", "limit"}, {k, "?limit=201", "limit"}, {k, "?cursor=bogus", "cursor"}, {other, "?cursor=" + cursor, "cursor"},
	} {
		r := n.do("GET", "/v1/geofences"+c.query, c.key, nil)
		if r.Status != 400 || r.errCode(t) != "invalid_request" {
			t.Errorf("%s: %d %s, want 400 invalid_request", c.query, r.Status, r.Body)
			continue
		}
		if d := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d[c.field] == nil {
			t.Errorf("%s: details %v, want %s named", c.query, d, c.field)
		}
	}
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	return out
}
