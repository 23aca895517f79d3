// Package tiles serves a PMTiles v3 archive over HTTP: its header and
// metadata, its tiles by z/x/y, and the archive itself, read-only and by
// byte range, for clients that read PMTiles themselves (the metadata's
// url). The reader is internal/tiles.
//
// Handlers hold the archive, its file name and its ETag, set by New and
// only read afterwards; an open Archive is safe for concurrent Tile and
// ReadAt calls and its Header and Metadata are only read, so the handlers
// serve any number of requests at once.
package tiles

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/internal/tiles"
)

// HeaderView is the header as the metadata endpoint shows it.
type HeaderView struct {
	SpecVersion  int     `json:"specVersion"`
	MinZoom      int     `json:"minZoom"`
	MaxZoom      int     `json:"maxZoom"`
	MinLon       float64 `json:"minLon"`
	MinLat       float64 `json:"minLat"`
	MaxLon       float64 `json:"maxLon"`
	MaxLat       float64 `json:"maxLat"`
	CenterZoom   int     `json:"centerZoom"`
	CenterLon    float64 `json:"centerLon"`
	CenterLat    float64 `json:"centerLat"`
	TileType     string  `json:"tileType"`
	Compression  string  `json:"compression"`
	TileDataSize uint64  `json:"tileDataSize"`
	MetadataSize uint64  `json:"metadataSize"`
}

// MetadataResponse answers the metadata endpoint.
type MetadataResponse struct {
	Success  bool        `json:"success"`
	File     string      `json:"file"`
	URL      string      `json:"url" doc:"the absolute address of the archive itself (GET, read by HTTP range requests as PMTiles clients do), as the client reached the service; tiles one by one are at /v1/api/tiles/buildings/{z}/{x}/{y}.mvt"`
	Header   *HeaderView `json:"header,omitempty"`
	Metadata string      `json:"metadata" doc:"JSON text: vector_layers, name, description, attribution"`
	Error    string      `json:"error,omitempty"`
}

var tileTypes = map[uint8]string{0: "unknown", 1: "mvt", 2: "png", 3: "jpeg", 4: "webp", 5: "avif"}
var compressions = map[uint8]string{0: "unknown", 1: "none", 2: "gzip", 3: "brotli", 4: "zstd"}

// mediaTypes are the Content-Type of a tile by the archive's tile type;
// an unknown type is application/octet-stream.
var mediaTypes = map[uint8]string{1: "application/vnd.mapbox-vector-tile", 2: "image/png", 3: "image/jpeg", 4: "image/webp", 5: "image/avif"}

// mediaType is the Content-Type of a's tiles (a vector tile without an
// archive).
func mediaType(a *tiles.Archive) string {
	if a == nil {
		return mediaTypes[1]
	}
	if t, ok := mediaTypes[a.Header.TileType]; ok {
		return t
	}
	return "application/octet-stream"
}

// Handlers serves one archive; a nil archive answers 501.
type Handlers struct {
	a    *tiles.Archive
	name string
	etag string
}

// New makes the handlers.
func New(a *tiles.Archive) *Handlers {
	h := &Handlers{a: a}
	if a != nil {
		h.name = a.Path[strings.LastIndex(a.Path, "/")+1:]
		h.etag = etag(a.Size(), a.ModTime())
	}
	return h
}

// Routes returns the tile routes (plain error form).
func (h *Handlers) Routes() []*api.Route {
	return []*api.Route{
		{Method: "GET", Path: "/v1/api/tiles/buildings/metadata", Tag: "tiles", Summary: "Header and metadata of the building tile archive", Permission: "maps:read", TokenScope: api.ConsoleReadScope,
			Auth: api.AuthKeyPlain, Response: MetadataResponse{}, Errors: []int{501}, Handler: h.metadata},
		{Method: "GET", Path: "/v1/api/tiles/buildings/{z}/{x}/{y}.mvt", Tag: "tiles", Summary: "One tile of the building archive, with the media type of the archive's tile type (application/vnd.mapbox-vector-tile for MVT; image/png, image/jpeg, image/webp or image/avif for a raster archive)", Permission: "maps:read", TokenScope: api.ConsoleReadScope,
			Auth: api.AuthKeyPlain, Raw: mediaType(h.a), Errors: []int{400, 404, 501},
			Params:  []api.Param{{Name: "z", In: "path", Type: "integer"}, {Name: "x", In: "path", Type: "integer"}, {Name: "y", In: "path", Type: "integer"}},
			Handler: h.tile},
		h.archiveRoute(),
	}
}

func (h *Handlers) metadata(c *api.Ctx) error {
	if h.a == nil {
		return &api.Error{Status: 501, Code: "not_implemented", Message: "no tile archive loaded (start with --tiles)"}
	}
	hd := h.a.Header
	out := MetadataResponse{Success: true, File: h.name, URL: archiveURL(c), Metadata: string(h.a.Metadata),
		Header: &HeaderView{SpecVersion: hd.SpecVersion, MinZoom: int(hd.MinZoom), MaxZoom: int(hd.MaxZoom), MinLon: hd.MinLon, MinLat: hd.MinLat,
			MaxLon: hd.MaxLon, MaxLat: hd.MaxLat, CenterZoom: int(hd.CenterZoom), CenterLon: hd.CenterLon, CenterLat: hd.CenterLat,
			TileType: tileTypes[hd.TileType], Compression: compressions[hd.TileCompression], TileDataSize: hd.TileDataLength, MetadataSize: hd.MetadataLength}}
	if !json.Valid(h.a.Metadata) {
		out.Metadata = "{}"
	}
	return c.JSON(200, out)
}

func (h *Handlers) tile(c *api.Ctx) error {
	// plain decimal digits, as every number of the API's queries
	// (01/0/1 is not tile 1/0/1); the router has taken the route's ".mvt"
	// off y: another one left (0/0/0.mvt.mvt) is part of y, no number
	zi, okz := api.DecimalInt(c.PathParam("z"))
	xi, okx := api.DecimalInt(c.PathParam("x"))
	yi, oky := api.DecimalInt(c.PathParam("y"))
	z, x, y := uint64(zi), uint64(xi), uint64(yi)
	if !okz || !okx || !oky || z > 30 {
		return &api.Error{Status: 400, Code: "invalid_request", Message: "z, x and y must be tile coordinates"}
	}
	if x >= 1<<z || y >= 1<<z {
		return &api.Error{Status: 400, Code: "invalid_request", Message: "x and y must be below 2^z (" + strconv.FormatUint(1<<z, 10) + " at zoom " + strconv.FormatUint(z, 10) + ")"}
	}
	if h.a == nil {
		return &api.Error{Status: 501, Code: "not_implemented", Message: "no tile archive loaded (start with --tiles)"}
	}
	b, ok, err := h.a.Tile(uint8(z), uint32(x), uint32(y))
	if err != nil {
		return &api.Error{Status: 500, Code: "internal_error", Message: "Failed to fetch tile", Cause: err}
	}
	if !ok {
		return &api.Error{Status: 404, Code: "not_found", Message: "no such tile"}
	}
	if enc := codings[h.a.Header.TileCompression]; enc != "" {
		c.Response.Header.Set("Vary", "Accept-Encoding")
		if accepts(c.Request.Header.Peek("Accept-Encoding"), enc) {
			c.Response.Header.Set("Content-Encoding", enc)
		} else if b, err = decode(b, enc); err != nil {
			return &api.Error{Status: 500, Code: "internal_error", Message: "Failed to decompress tile", Cause: err}
		}
	}
	c.SetContentType(mediaType(h.a))
	c.SetStatusCode(200)
	c.SetBody(b)
	return nil
}

// codings are the Content-Encoding names of the archive's compressed tile
// compressions.
var codings = map[uint8]string{2: "gzip", 3: "br", 4: "zstd"}

// maxTile bounds a tile decompressed for a client.
const maxTile = 64 << 20

// qvalue reads a quality value as RFC 9110 (12.4.2) writes it: 0 or 1,
// with at most three decimals, 1 only as 1.000 at most (0.5, 1, 1.0,
// 0.001). Anything else, an exponent (1e0), a hexadecimal float, Inf,
// NaN, a sign or a value over 1, is read as 0: the coding is not taken
// and the tile goes out decompressed, which every client reads.
func qvalue(v string) float64 {
	whole, frac, _ := strings.Cut(v, ".")
	if len(frac) > 3 || whole != "0" && whole != "1" || strings.Trim(frac, "0123456789") != "" ||
		whole == "1" && strings.Trim(frac, "0") != "" {
		return 0
	}
	f, err := strconv.ParseFloat(whole+"."+frac+"0", 64)
	if err != nil {
		return 0
	}
	return f
}

// accepts reports whether an Accept-Encoding header value takes content
// coding enc (RFC 9110, 12.5.3): named, or covered by "*", with a
// quality above 0. No header takes none: the tile goes out decompressed,
// which every client reads.
func accepts(header []byte, enc string) bool {
	named, star := -1.0, -1.0
	for _, item := range strings.Split(string(header), ",") {
		coding, params, _ := strings.Cut(item, ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				q = qvalue(strings.TrimRight(v, " \t"))
			}
		}
		switch coding = strings.TrimSpace(coding); {
		case strings.EqualFold(coding, enc):
			named = q
		case coding == "*":
			star = q
		}
	}
	if named >= 0 {
		return named > 0
	}
	return star > 0
}

// decode is tile b, stored with content coding enc, decompressed.
func decode(b []byte, enc string) ([]byte, error) {
	var out []byte
	var err error
	switch enc {
	case "gzip":
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(b)); err == nil {
			out, err = io.ReadAll(io.LimitReader(zr, maxTile+1))
		}
	case "br":
		out, err = fasthttp.AppendUnbrotliBytes(nil, b)
	case "zstd":
		out, err = fasthttp.AppendUnzstdBytes(nil, b)
	default:
		return nil, fmt.Errorf("tiles: content coding %s", enc)
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("tiles: decompress %s tile: %w", enc, err)
	case len(out) > maxTile:
		return nil, fmt.Errorf("tiles: %s tile over %d bytes decompressed", enc, maxTile)
	}
	return out, nil
}
