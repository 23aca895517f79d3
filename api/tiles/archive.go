package tiles

import (
	"bytes"
	"io"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/fleethub/fleethub/api"
)

// archivePath is where the archive itself is served, for clients that
// read it by range (the metadata's url).
const archivePath = "/v1/api/tiles/buildings/archive.pmtiles"

// archiveType is the media type PMTiles archives are served with.
const archiveType = "application/vnd.pmtiles"

// archiveRoute serves the archive's bytes read-only, whole or by one
// byte range, with its validators.
func (h *Handlers) archiveRoute() *api.Route {
	return &api.Route{Method: "GET", Path: archivePath, Tag: "tiles",
		Summary:    "The building tile archive itself (PMTiles v3), for clients that read it by HTTP range requests: the whole file (200), or one byte range of it (206 with Content-Range); Accept-Ranges, ETag and Last-Modified on every answer",
		Permission: "maps:read", TokenScope: api.ConsoleReadScope, Auth: api.AuthKeyPlain, Raw: archiveType,
		Also:   []int{206, 304},
		Errors: []int{412, 416, 501},
		Params: []api.Param{
			{Name: "Range", In: "header", Type: "string", Description: "bytes=first-last, bytes=first- or bytes=-suffix: one range is answered 206; several are answered with the whole archive (200); one past the end, or a malformed one, 416 with Content-Range bytes */size"},
			{Name: "If-Range", In: "header", Type: "string", Description: "the ETag or Last-Modified of the archive the client holds: the Range is honoured only when it matches, else the whole archive is sent"},
			{Name: "If-Match", In: "header", Type: "string", Description: "the ETag of the archive the client holds: 412 when it is another archive"},
			{Name: "If-None-Match", In: "header", Type: "string", Description: "304 when it names the archive's ETag"},
			{Name: "If-Modified-Since", In: "header", Type: "string", Description: "without If-None-Match: 304 when the archive is not newer"},
		},
		Handler: h.archive}
}

// archiveURL is the absolute address of the archive as the client
// reached the service: its Host, and https behind TLS or a proxy that
// says so (X-Forwarded-Proto), as the streams' websocket_url is built.
func archiveURL(c *api.Ctx) string {
	scheme := "http"
	if c.Secure() {
		scheme = "https"
	}
	return (&url.URL{Scheme: scheme, Host: string(c.Host()), Path: archivePath}).String()
}

// etag is the archive's validator: its size and modification time at
// Open. The archive is read from the file opened at start, so the bytes
// under one ETag never change while the server runs.
func etag(size int64, mod time.Time) string {
	return `"` + strconv.FormatInt(size, 16) + "-" + strconv.FormatInt(mod.UnixNano(), 16) + `"`
}

func (h *Handlers) archive(c *api.Ctx) error {
	if h.a == nil {
		return &api.Error{Status: 501, Code: "not_implemented", Message: "no tile archive loaded (start with --tiles)"}
	}
	size := h.a.Size()
	mod := h.a.ModTime().UTC().Truncate(time.Second) // as Last-Modified says it
	rh, req := &c.Response.Header, &c.Request.Header
	rh.Set("Accept-Ranges", "bytes")
	rh.Set("ETag", h.etag)
	rh.SetLastModified(mod)
	// preconditions in the order of RFC 9110, 13.2.2
	if im := req.Peek("If-Match"); len(im) > 0 && !matches(im, h.etag, false) {
		return api.Errf("precondition_failed", "If-Match names another archive than this one (ETag %s)", h.etag)
	}
	if inm := req.Peek("If-None-Match"); len(inm) > 0 {
		if matches(inm, h.etag, true) {
			c.SetStatusCode(fasthttp.StatusNotModified)
			return nil
		}
	} else if t, err := fasthttp.ParseHTTPDate(req.Peek("If-Modified-Since")); err == nil && !mod.After(t) {
		c.SetStatusCode(fasthttp.StatusNotModified)
		return nil
	}
	start, n, status := int64(0), size, fasthttp.StatusOK
	if spec := req.Peek("Range"); len(spec) > 0 && h.ifRange(req.Peek("If-Range"), mod) {
		first, last, kind := byteRange(spec, size)
		switch kind {
		case rangeBad:
			rh.Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
			return api.Errf("range_not_satisfiable", "Range %q is not a satisfiable byte range of the archive's %d bytes", spec, size)
		case rangeOne:
			start, n, status = first, last-first+1, fasthttp.StatusPartialContent
			rh.Set("Content-Range", "bytes "+strconv.FormatInt(first, 10)+"-"+strconv.FormatInt(last, 10)+"/"+strconv.FormatInt(size, 10))
		}
	}
	c.SetContentType(archiveType)
	c.SetStatusCode(status)
	c.SetBodyStream(io.NewSectionReader(h.a, start, n), int(n))
	return nil
}

// ifRange reports whether a Range is to be honoured under If-Range v
// (RFC 9110, 13.1.5): no If-Range, or one naming this archive by its
// ETag (strong comparison) or exactly its Last-Modified.
func (h *Handlers) ifRange(v []byte, mod time.Time) bool {
	if len(v) == 0 {
		return true
	}
	if v[0] == '"' || bytes.HasPrefix(v, []byte("W/")) {
		return string(v) == h.etag
	}
	t, err := fasthttp.ParseHTTPDate(v)
	return err == nil && t.Equal(mod)
}

// matches reports whether an If-Match or If-None-Match list names tag
// ("*" names any); weak compares without the W/ prefix (If-None-Match),
// else a weak tag never matches (If-Match).
func matches(list []byte, tag string, weak bool) bool {
	for _, item := range bytes.Split(list, []byte(",")) {
		item = bytes.TrimSpace(item)
		if string(item) == "*" {
			return true
		}
		if weak {
			item = bytes.TrimPrefix(item, []byte("W/"))
		}
		if string(item) == tag {
			return true
		}
	}
	return false
}

// What a Range header asks of a body (byteRange).
const (
	rangeWhole = iota // another unit, or several ranges: the whole body is sent
	rangeOne          // one satisfiable range: 206
	rangeBad          // malformed, or no range within the body: 416
)

// byteRange reads a Range header against a body of size bytes (RFC
// 9110, 14.1.2): first and last of its one satisfiable range, with kind
// rangeOne. A unit other than bytes is ignored (rangeWhole), as is a set
// of several satisfiable ranges, which are answered with the whole body
// rather than multipart/byteranges; a malformed set, or one with no
// range that starts within the body, is rangeBad.
func byteRange(spec []byte, size int64) (first, last int64, kind int) {
	unit, set, ok := bytes.Cut(spec, []byte("="))
	if !ok || !bytes.EqualFold(bytes.TrimSpace(unit), []byte("bytes")) {
		if ok {
			return 0, 0, rangeWhole
		}
		return 0, 0, rangeBad
	}
	found := 0
	for _, r := range bytes.Split(set, []byte(",")) {
		r = bytes.TrimSpace(r)
		if len(r) == 0 {
			continue // empty list elements are allowed (RFC 9110, 5.6.1)
		}
		a, b, ok := bytes.Cut(r, []byte("-"))
		if !ok {
			return 0, 0, rangeBad
		}
		var f, l int64
		switch {
		case len(a) == 0: // suffix: the last b bytes
			n, ok := digits(b)
			if !ok {
				return 0, 0, rangeBad
			}
			if n == 0 {
				continue
			}
			f, l = max(size-n, 0), size-1
		default:
			var ok bool
			if f, ok = digits(a); !ok {
				return 0, 0, rangeBad
			}
			l = size - 1
			if len(b) > 0 {
				e, ok := digits(b)
				if !ok || e < f {
					return 0, 0, rangeBad
				}
				l = min(e, size-1)
			}
			if f >= size {
				continue
			}
		}
		if found++; found == 1 {
			first, last = f, l
		}
	}
	switch found {
	case 0:
		return 0, 0, rangeBad
	case 1:
		return first, last, rangeOne
	}
	return 0, 0, rangeWhole
}

// digits reads a non-empty decimal number; one past int64 reads as the
// largest (a position past any body).
func digits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return math.MaxInt64, true
	}
	return n, true
}
