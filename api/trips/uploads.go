package trips

import (
	"bytes"
	"fmt"
	"reflect"
	"time"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/ratelimit"
	gojson "github.com/goccy/go-json"
)

// decodeFast decodes an upload body with goccy/go-json (about six times
// faster than encoding/json on 1,000-point batches, see
// docs/performance.md); on error it decodes again with encoding/json for
// the precise message.
func decodeFast(c *api.Ctx, v any) error {
	return decodeUpload(c.Request.Header.ContentType(), c.PostBody(), v)
}

// decodeUpload is decodeFast over the Content-Type and body. A body that
// is not a JSON object goes to api.DecodeJSON, which refuses it as every
// other route does: goccy/go-json, like encoding/json, takes null as {}.
// A field the request does not declare fails the fast decode, and
// api.DecodeJSON then names each one, as it names a repeated member
// (jsonpath.HasRepeated sends such a body there); an identifier sent
// blank is refused as api.DecodeJSON refuses it.
func decodeUpload(contentType, body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return api.Errf("invalid_request", "request body is required")
	}
	if err := api.CheckJSON(contentType); err != nil {
		return err
	}
	if !isObject(body) {
		return api.DecodeJSON(body, v)
	}
	dec := gojson.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || api.TrailingData(body, dec.InputOffset()) || jsonpath.HasRepeated(body, true) {
		// the precise message, naming every unknown field and every
		// repeated member (goccy/go-json keeps the last of two)
		reflect.ValueOf(v).Elem().SetZero()
		return api.DecodeJSON(body, v)
	}
	if jsonpath.MayBeBlank(v) {
		return api.CheckIDs(body, v) // an id sent blank, as api.DecodeJSON refuses it
	}
	return nil
}

// isObject reports whether body, past leading JSON whitespace, opens an
// object: the rule of api.DecodeJSON.
func isObject(body []byte) bool {
	t := bytes.TrimLeft(body, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

func (h *Handlers) batch(c *api.Ctx) error {
	var r domain.BatchRequest
	if err := decodeFast(c, &r); err != nil {
		return err
	}
	if len(r.Locations) > domain.MaxBatch {
		return api.Errf("batch_too_large", "a batch carries at most %d points, got %d", domain.MaxBatch, len(r.Locations)).
			WithDetails(map[string]string{"locations": "at most 1000 points"})
	}
	org, env := c.Scope()
	res, err := h.svc.UploadBatch(c.Context(), org, env, &r)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, res)
}

func (h *Handlers) single(c *api.Ctx) error {
	var r domain.SingleRequest
	if err := decodeFast(c, &r); err != nil {
		return err
	}
	if r.TripID != "" && h.limiter != nil {
		res, err := h.limiter.Allow(c.Context(), "single:"+c.Principal.Org+":"+r.TripID, ratelimit.Limit{Rate: h.singleRate, Burst: h.singleRate, Window: time.Second})
		if err != nil {
			// as the per-key limit: the shared limiter already answers
			// from memory while Redis is away, so an error here is
			// unexpected; the upload is refused, never let past the limit
			return api.Internal(fmt.Errorf("trips: single upload limit of trip %s: %w", r.TripID, err))
		}
		if !res.Allowed {
			e := api.Errf("rate_limit_exceeded", "at most %d single uploads per second per trip", h.singleRate)
			e.RetryAfter = 1
			return e
		}
	}
	org, env := c.Scope()
	res, err := h.svc.UploadSingle(c.Context(), org, env, &r)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, res)
}
