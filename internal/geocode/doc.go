// Package geocode is the hub's address engine: an index of US address
// points loaded from OpenAddresses CSV or GeoJSON files, or the
// {"addresses": [...]} JSON layout (source.go), so an operator can point
// it at the files of their own region. It answers search, autocomplete,
// validation (does an address exist, and what was corrected) and the
// nearest address to a point (for the pipeline's location_names
// enrichment). It has no HTTP: api/geocoding serves it, cmd/fleethub opens
// it and hands it to hub/pipeline as a pipeline.Namer.
//
// Layout (index.go). Addresses are grouped by street (one street name in
// one locality: city, state, ZIP) and streets by locality, so that words
// find streets and house numbers are looked up within a street (sorted by
// number key). Strings live in sorted tables (strtab): the vocabulary of
// street and town words, the house-number keys (hyphens dropped: 203-06
// is 20306) and the ZIPs, where an ID is a position and a prefix a range
// of IDs; postings are compressed rows (csr): word → streets, word →
// localities, number → streets, ZIP → localities. Numbers and words are
// separate structures, so a digit being typed never crowds out streets.
// Rows without a city or state take them from their ZIP's other rows
// (build.go), a state failing that from the ZIP prefix (zipstate.go).
//
// A query (query.go, search.go) is folded like the index (accents, ß,
// full width; tokens.go), analysed word by word (house number, ZIP, unit,
// exact words, abbreviations, ordinals, the prefix being typed), gathers
// candidate streets from its cheap words' postings, looks for its typos
// (Damerau–Levenshtein, one or two edits) among the candidates' words —
// and across the vocabulary only for a word that matched nothing — then
// scores the best 200 streets field by field and keeps the best few. The
// measured costs that shaped this are in docs/performance.md (Geocoding):
// a vocabulary-wide typo walk for every word cost 85 % of a query at five
// million addresses, so it became the exception.
//
// Saved index (saved.go, open.go): Open keeps the built index under the
// data directory, keyed by the SHA-256 of the input files' content and the
// format version, checked by CRC-32C and by bounds on every table before
// use; a file that fails is rebuilt, never trusted.
//
// Concurrency: Load and Open build an Index and nothing changes it
// afterwards, so a loaded Index is read-only and safe for any number of
// concurrent Find, Search, Autocomplete, Validate and Nearest calls
// without locks. Each query takes its working memory (per-street score
// arrays) from a sync.Pool of the index and returns it cleared. Results
// are values: callers may keep them.
package geocode
