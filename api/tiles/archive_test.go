package tiles_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	apitiles "github.com/fleethub/fleethub/api/tiles"
	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/tiles/tilestest"
)

// pmtilesHeader reads a PMTiles v3 header as the specification lays it
// out, apart from internal/tiles: the fields the metadata endpoint shows,
// by their names there.
func pmtilesHeader(t *testing.T, b []byte) map[string]any {
	t.Helper()
	if len(b) != 127 || string(b[:7]) != "PMTiles" || b[7] != 3 {
		t.Fatalf("not a PMTiles v3 header: %q", b)
	}
	u := func(o int) float64 { return float64(binary.LittleEndian.Uint64(b[o:])) }
	e7 := func(o int) float64 { return float64(int32(binary.LittleEndian.Uint32(b[o:]))) / 1e7 }
	return map[string]any{"specVersion": 3.0, "metadataOffset": u(24), "metadataSize": u(32), "tileDataSize": u(64),
		"internalCompression": float64(b[97]), "tileType": map[byte]string{1: "mvt", 2: "png"}[b[99]], "compression": map[byte]string{1: "none", 2: "gzip"}[b[98]],
		"minZoom": float64(b[100]), "maxZoom": float64(b[101]), "minLon": e7(102), "minLat": e7(106), "maxLon": e7(110), "maxLat": e7(114),
		"centerZoom": float64(b[118]), "centerLon": e7(119), "centerLat": e7(123)}
}

// fetch sends GET url with the headers given as name, value pairs and
// the key unless noKey.
func fetch(t *testing.T, url string, noKey bool, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !noKey {
		req.Header.Set("X-API-Key", testKey)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// TestArchiveByRange reads the archive as a PMTiles client does: the
// metadata's url is the archive's address; its first 127 bytes, asked
// for by range, are a PMTiles v3 header that says what the metadata
// endpoint says, and the metadata section they point to is the
// metadata. Any single range answers 206 with exactly those bytes of
// the file and a Content-Range; no range, several, or another unit the
// whole file; a range past the end or malformed 416; no key 401.
func TestArchiveByRange(t *testing.T) {
	const md = `{"name":"fixture","vector_layers":[{"id":"buildings","fields":{"height":"Number"},"minzoom":0,"maxzoom":2}]}`
	file := tilestest.Archive{Tiles: []tilestest.Tile{{Z: 0, X: 0, Y: 0, Data: []byte("tile 0/0/0")}, {Z: 1, X: 1, Y: 0, Data: []byte("tile 1/1/0")}, {Z: 2, X: 3, Y: 2, Data: []byte("tile 2/3/2")}},
		Metadata: []byte(md), Gzip: true, LeafSize: 1, TileType: 1, TileCompression: 1,
		Bounds: [4]float64{11.15, 43.72, 11.33, 43.83}, Center: [2]float64{11.25, 43.78}, CenterZoom: 1}.File(t)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	size := len(raw)
	base := serve(t, file)

	res, b := fetch(t, base+"/v1/api/tiles/buildings/metadata", false)
	var meta struct {
		URL    string         `json:"url"`
		Header map[string]any `json:"header"`
	}
	if err := json.Unmarshal(b, &meta); err != nil || res.StatusCode != 200 {
		t.Fatalf("metadata: %d %s", res.StatusCode, b)
	}
	if meta.URL != base+"/v1/api/tiles/buildings/archive.pmtiles" {
		t.Fatalf("metadata url %q, want the archive's address %s/v1/api/tiles/buildings/archive.pmtiles", meta.URL, base)
	}

	res, b = fetch(t, meta.URL, false, "Range", "bytes=0-126")
	if res.StatusCode != 206 || res.Header.Get("Content-Range") != fmt.Sprintf("bytes 0-126/%d", size) || res.ContentLength != 127 ||
		res.Header.Get("Accept-Ranges") != "bytes" || res.Header.Get("Content-Type") != "application/vnd.pmtiles" || res.Header.Get("ETag") == "" || res.Header.Get("Last-Modified") == "" {
		t.Fatalf("header range: %d %v %d bytes", res.StatusCode, res.Header, len(b))
	}
	h := pmtilesHeader(t, b)
	for k, v := range meta.Header {
		if h[k] != v {
			t.Errorf("header %s: %v in the archive's bytes, %v in the metadata", k, h[k], v)
		}
	}
	etag := res.Header.Get("ETag")

	// the metadata section, where the header says, is the metadata
	off, n := h["metadataOffset"].(float64), h["metadataSize"].(float64)
	res, b = fetch(t, meta.URL, false, "Range", fmt.Sprintf("bytes=%d-%d", int(off), int(off+n)-1))
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil || res.StatusCode != 206 {
		t.Fatalf("metadata range: %d %v", res.StatusCode, err)
	}
	if got, err := io.ReadAll(zr); err != nil || string(got) != md {
		t.Errorf("metadata section: %q %v, want %s", got, err, md)
	}

	// any single range is those bytes of the file
	rng := rand.New(rand.NewPCG(1, uint64(size)))
	for i := 0; i < 200; i++ {
		first := rng.IntN(size)
		last := first + rng.IntN(size-first+10) // past the end too: cut at the end
		spec, wantFirst, wantLast := fmt.Sprintf("bytes=%d-%d", first, last), first, min(last, size-1)
		switch i % 4 {
		case 1:
			spec, wantLast = fmt.Sprintf("bytes=%d-", first), size-1
		case 2:
			n := 1 + rng.IntN(size+10)
			spec, wantFirst, wantLast = fmt.Sprintf("bytes=-%d", n), max(size-n, 0), size-1
		}
		res, b := fetch(t, meta.URL, false, "Range", spec)
		if res.StatusCode != 206 || !bytes.Equal(b, raw[wantFirst:wantLast+1]) || res.ContentLength != int64(wantLast-wantFirst+1) ||
			res.Header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", wantFirst, wantLast, size) {
			t.Fatalf("%s: %d %v %d bytes, want bytes %d-%d of %d", spec, res.StatusCode, res.Header, len(b), wantFirst, wantLast, size)
		}
	}

	// the whole file: without a range, with several, with another unit
	for _, spec := range []string{"", "bytes=0-1,5-9", "items=0-1"} {
		res, b := fetch(t, meta.URL, false, "Range", spec)
		if res.StatusCode != 200 || !bytes.Equal(b, raw) || res.ContentLength != int64(size) || res.Header.Get("Content-Range") != "" || res.Header.Get("Accept-Ranges") != "bytes" {
			t.Errorf("Range %q: %d %v %d bytes, want the whole archive", spec, res.StatusCode, res.Header, len(b))
		}
	}

	// unsatisfiable or malformed: 416, Content-Range bytes */size, the plain form
	for _, spec := range []string{fmt.Sprintf("bytes=%d-", size), fmt.Sprintf("bytes=%d-%d", size+5, size+9), "bytes=-0", "bytes=9-5", "bytes=a-b", "bytes=5", "bytes 0-1", "bytes=" + strconv.FormatUint(math.MaxUint64, 10) + "-"} {
		res, b := fetch(t, meta.URL, false, "Range", spec)
		var e map[string]any
		if err := json.Unmarshal(b, &e); err != nil || res.StatusCode != 416 || res.Header.Get("Content-Range") != fmt.Sprintf("bytes */%d", size) || e["success"] != false || e["error"] == nil {
			t.Errorf("Range %q: %d %v %s, want 416", spec, res.StatusCode, res.Header, b)
		}
	}

	// validators
	for _, c := range []struct {
		headers []string
		status  int
	}{
		{[]string{"If-None-Match", etag}, 304},
		{[]string{"If-None-Match", "W/" + etag, "Range", "bytes=0-126"}, 304},
		{[]string{"If-None-Match", `"other"`}, 200},
		{[]string{"If-Modified-Since", res.Header.Get("Last-Modified")}, 304},
		{[]string{"If-Range", etag, "Range", "bytes=0-126"}, 206},
		{[]string{"If-Range", res.Header.Get("Last-Modified"), "Range", "bytes=0-126"}, 206},
		{[]string{"If-Range", `"other"`, "Range", "bytes=0-126"}, 200},
		{[]string{"If-Match", etag, "Range", "bytes=0-126"}, 206},
		{[]string{"If-Match", `"other"`, "Range", "bytes=0-126"}, 412},
	} {
		res, b := fetch(t, meta.URL, false, c.headers...)
		if res.StatusCode != c.status || res.Header.Get("ETag") != etag {
			t.Errorf("%q: %d %v, want %d", c.headers, res.StatusCode, res.Header, c.status)
		}
		if want := map[int]int{304: 0, 200: size, 206: 127}[c.status]; c.status != 412 && len(b) != want {
			t.Errorf("%q: %d bytes, want %d", c.headers, len(b), want)
		}
	}

	// the key is required, as for the tiles
	res, b = fetch(t, meta.URL, true, "Range", "bytes=0-126")
	var e map[string]any
	if err := json.Unmarshal(b, &e); err != nil || res.StatusCode != 401 || e["success"] != false {
		t.Errorf("without a key: %d %s, want 401 in the plain form", res.StatusCode, b)
	}

	// HEAD answers as GET does, without the body: a client learns the
	// archive's size and that it takes ranges
	req, err := http.NewRequest("HEAD", meta.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", testKey)
	if res, err := client.Do(req); err != nil {
		t.Errorf("HEAD: %v", err)
	} else {
		res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Accept-Ranges") != "bytes" || res.Header.Get("Content-Length") != strconv.FormatInt(int64(size), 10) {
			t.Errorf("HEAD: %d %v, want 200 with the archive's length (%d) and Accept-Ranges", res.StatusCode, res.Header, size)
		}
	}

	// the address follows the scheme the client used
	res, b = fetch(t, base+"/v1/api/tiles/buildings/metadata", false, "X-Forwarded-Proto", "https")
	if err := json.Unmarshal(b, &meta); err != nil || meta.URL != "https://"+base[len("http://"):]+"/v1/api/tiles/buildings/archive.pmtiles" {
		t.Errorf("metadata behind https: %d %q", res.StatusCode, meta.URL)
	}
}

// TestArchiveWithoutTiles: without an archive the address answers 501,
// as the other tile endpoints do.
func TestArchiveWithoutTiles(t *testing.T) {
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), key, ratelimit.NewMemory(nil))
	srv.Handle(apitiles.New(nil).Routes()...)
	base := "http://" + apitest.Serve(t, srv)
	if res, b := fetch(t, base+"/v1/api/tiles/buildings/archive.pmtiles", false, "Range", "bytes=0-126"); res.StatusCode != 501 {
		t.Errorf("without an archive: %d %s, want 501", res.StatusCode, b)
	}
}
