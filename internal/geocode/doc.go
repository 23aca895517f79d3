// Package geocode is the hub's address engine: an in-memory index of US
// address points loaded from OpenAddresses-layout CSV files
// (LON,LAT,NUMBER,STREET,UNIT,CITY,DISTRICT,REGION,POSTCODE,ID,HASH), so an
// operator can point it at the files of their own region. It answers
// fuzzy full-text search, autocomplete, validation (does an address
// exist) and the nearest address to a point (reverse geocoding, for the
// pipeline's location_names enrichment). It has no HTTP: api/geocoding
// serves it, cmd/fleethub loads it and hands it to ingest/pipeline as a
// pipeline.Namer.
//
// Every address is normalized into tokens (Tokens: lower case,
// punctuation dropped, USPS suffix and direction abbreviations expanded,
// e.g. "st" → "street", "n" → "north"; Queens-style numbers such as
// "90-01" stay one token). A token → addresses posting list answers exact
// tokens, a sorted token list answers prefixes (autocomplete) and tokens
// within one edit of a query token (fuzzy search), and a 0.01° grid
// answers Nearest.
//
// Concurrency: Load builds an Index and nothing changes it afterwards, so a
// loaded Index is read-only and safe for any number of concurrent Search,
// Autocomplete, Validate and Nearest calls without locks. Each query
// allocates its own score arrays. The *Address of a Match points into the
// index: callers read it and must not modify it.
package geocode
