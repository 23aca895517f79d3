package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/internal/geocode/heldout"
)

// measureHTTP sends the held-out queries to a running server, one after
// the other, with the keys of a comma list in turn, and reports per endpoint the p50 and p99 of the whole
// request (connection kept alive), then the searches per second of two
// callers. Answers are checked for status 200 only: their accuracy is
// the in-process table's.
func measureHTTP(base, keys string, cases []heldout.Case, dur time.Duration) {
	// /v1/search allows 1,000 requests per minute per key: the requests
	// take the keys in turn
	ks := strings.Split(keys, ",")
	var turn atomic.Int64
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 10 * time.Second}
	get := func(c heldout.Case) (time.Duration, error) {
		path := "/v1/search?limit=5&q="
		switch {
		case c.Prefix:
			path = "/v1/autocomplete?limit=5&q="
		case c.Validate != 0:
			path = "/v1/validate?q="
		}
		req, err := http.NewRequest("GET", base+path+url.QueryEscape(c.Q), nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("X-API-Key", ks[int(turn.Add(1))%len(ks)])
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		took := time.Since(start)
		if err == nil && res.StatusCode != 200 {
			err = fmt.Errorf("%s: status %d", c.Q, res.StatusCode)
		}
		return took, err
	}
	for _, c := range cases[:min(200, len(cases))] { // warm up
		if _, err := get(c); err != nil {
			log.Fatal(err)
		}
	}
	lat := map[string][]time.Duration{}
	for _, c := range cases {
		d, err := get(c)
		if err != nil {
			log.Fatal(err)
		}
		kind := "search"
		switch {
		case c.Prefix:
			kind = "autocomplete"
		case c.Validate != 0:
			kind = "validate"
		}
		lat[kind] = append(lat[kind], d)
	}
	for _, kind := range []string{"search", "autocomplete", "validate"} {
		l := lat[kind]
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
		if len(l) == 0 {
			continue
		}
		fmt.Printf("HTTP %-13s one caller: p50 %s, p99 %s over %d requests\n", kind, l[len(l)/2].Round(time.Microsecond),
			l[min(len(l)-1, len(l)*99/100)].Round(time.Microsecond), len(l))
	}
	var search []heldout.Case
	for _, c := range cases {
		if !c.Prefix && c.Validate == 0 {
			search = append(search, c)
		}
	}
	var done, failed atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(dur)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; time.Now().Before(stop); i += 2 {
				if _, err := get(search[i%len(search)]); err != nil {
					failed.Add(1)
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	fmt.Printf("HTTP search, two callers: %.0f per second (%d failed)\n", float64(done.Load())/dur.Seconds(), failed.Load())
}
