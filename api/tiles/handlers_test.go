package tiles_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	apitiles "github.com/fleethub/fleethub/api/tiles"
	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/tiles"
	"github.com/fleethub/fleethub/internal/tiles/tilestest"
)

// key is the one key the test servers know.
var key = apitest.NewKey("maps:read")

// testKey is its value.
var testKey = key.Key

// serve serves archive file's tile routes over HTTP on a free port.
func serve(t *testing.T, file string) string {
	t.Helper()
	a, err := tiles.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), key, ratelimit.NewMemory(nil))
	srv.Handle(apitiles.New(a).Routes()...)
	addr := apitest.Serve(t, srv)
	return "http://" + addr
}

// client hands the body over as sent and sends Accept-Encoding only when
// asked to.
var client = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// get asks for path with Accept-Encoding accept ("" sends none).
func get(t *testing.T, url, path, accept string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", testKey)
	if accept != "" {
		req.Header.Set("Accept-Encoding", accept)
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

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTileEncoding: an archive of gzip-compressed tiles serves a tile as
// stored, Content-Encoding gzip, to a client that accepts gzip, and
// decompressed, without Content-Encoding, to one that does not (identity
// only, gzip;q=0, or no Accept-Encoding at all); either way with Vary:
// Accept-Encoding. A stored tile that does not decompress is 500 for the
// client that needs it decompressed.
func TestTileEncoding(t *testing.T) {
	plain := []byte("tile 1/0/1")
	stored := gz(t, plain)
	url := serve(t, tilestest.Archive{Tiles: []tilestest.Tile{{Z: 1, X: 0, Y: 1, Data: stored}, {Z: 1, X: 1, Y: 1, Data: []byte{0x1f, 0x8b, 0x08, 0x00, 0xff}}},
		Metadata: []byte(`{}`), Gzip: true, TileType: 1, TileCompression: 2}.File(t))
	for _, tc := range []struct {
		accept string
		gzip   bool
	}{
		{"gzip", true}, {"gzip, deflate, br", true}, {"br;q=1.0, GZIP;q=0.5", true}, {"*", true},
		{"identity", false}, {"", false}, {"gzip;q=0", false}, {"br, zstd", false}, {"*;q=0", false}, {"*, gzip;q=0", false},
		// quality values as RFC 9110 writes them; anything else is 0
		{"gzip;q=0.001", true}, {"gzip;q=1.000", true}, {"gzip;q=1.", true}, {"gzip ; q=0.5 , br", true}, {"gzip;Q=1", true},
		{"gzip;q=1e0", false}, {"gzip;q=0x1p0", false}, {"gzip;q=Inf", false}, {"gzip;q=NaN", false}, {"gzip;q=+1", false},
		{"gzip;q=2", false}, {"gzip;q=1.001", false}, {"gzip;q=0.0001", false}, {"gzip;q= 1", false}, {"*, gzip;q=1e0", false},
	} {
		res, b := get(t, url, "/v1/api/tiles/buildings/1/0/1.mvt", tc.accept)
		want, enc := plain, ""
		if tc.gzip {
			want, enc = stored, "gzip"
		}
		if res.StatusCode != 200 || !bytes.Equal(b, want) || res.Header.Get("Content-Encoding") != enc || res.Header.Get("Vary") != "Accept-Encoding" ||
			res.Header.Get("Content-Type") != "application/vnd.mapbox-vector-tile" {
			t.Errorf("Accept-Encoding %q: %d %q %v; want %q, Content-Encoding %q", tc.accept, res.StatusCode, b, res.Header, want, enc)
		}
	}
	if res, b := get(t, url, "/v1/api/tiles/buildings/1/1/1.mvt", "identity"); res.StatusCode != 500 {
		t.Errorf("a corrupt gzip tile, decompressed: %d %s", res.StatusCode, b)
	}
	if res, b := get(t, url, "/v1/api/tiles/buildings/1/1/1.mvt", "gzip"); res.StatusCode != 200 || len(b) != 5 {
		t.Errorf("a corrupt gzip tile, as stored: %d %q", res.StatusCode, b)
	}
}

// TestTileCoordinates: x or y of 2^z or more is no tile of zoom z: 400
// invalid_request in the plain form, as coordinates that are not numbers
// or a zoom over 30; a tile of valid coordinates the archive does not
// hold is 404. A y with the suffix twice (1/0/1.mvt.mvt) is no number,
// nor a coordinate with a leading zero or a sign (01/0/1, 1/0/+1).
func TestTileCoordinates(t *testing.T) {
	url := serve(t, tilestest.Archive{Tiles: []tilestest.Tile{{Z: 1, X: 0, Y: 1, Data: []byte("t")}}, Metadata: []byte(`{}`), TileType: 1, TileCompression: 1}.File(t))
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"1/5/5", 400}, {"1/2/0", 400}, {"1/0/2", 400}, {"0/1/0", 400}, {"31/0/0", 400}, {"a/b/c", 400},
		{"1/0/1.mvt", 400}, {"1/0/1.mvt.mvt", 400}, // y "1.mvt" is no number: never tile 1/0/1
		{"01/0/1", 400}, {"1/00/1", 400}, {"1/0/+1", 400}, // plain decimal digits only: never tile 1/0/1
		{"1/1/1", 404}, {"2/3/3", 404}, {"1/0/1", 200},
	} {
		res, b := get(t, url, fmt.Sprintf("/v1/api/tiles/buildings/%s.mvt", tc.path), "")
		if res.StatusCode != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.path, res.StatusCode, b, tc.status)
			continue
		}
		if tc.status == 200 {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal(b, &e); err != nil || e["success"] != false || e["error"] == nil {
			t.Errorf("%s: %s, want the plain error form", tc.path, b)
		}
	}
}

// TestTileContentType: a tile goes out with the media type of the
// archive's tile type, so a raster archive's PNG is image/png, never
// labelled a vector tile; an archive of unknown tile type sends
// application/octet-stream.
func TestTileContentType(t *testing.T) {
	for _, tc := range []struct {
		tileType uint8
		want     string
	}{
		{1, "application/vnd.mapbox-vector-tile"}, {2, "image/png"}, {3, "image/jpeg"}, {4, "image/webp"}, {5, "image/avif"}, {0, "application/octet-stream"},
	} {
		url := serve(t, tilestest.Archive{Tiles: []tilestest.Tile{{Z: 0, X: 0, Y: 0, Data: []byte("tile")}}, Metadata: []byte(`{}`), TileType: tc.tileType, TileCompression: 1}.File(t))
		res, b := get(t, url, "/v1/api/tiles/buildings/0/0/0.mvt", "")
		if res.StatusCode != 200 || string(b) != "tile" || res.Header.Get("Content-Type") != tc.want {
			t.Errorf("tile type %d: %d %q Content-Type %q, want %q", tc.tileType, res.StatusCode, b, res.Header.Get("Content-Type"), tc.want)
		}
	}
}
