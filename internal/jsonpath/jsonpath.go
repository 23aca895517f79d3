// Package jsonpath names the places of a JSON body that do not fit the Go
// type it decodes into, by their full path (vehicles[0].break_windows,
// locations[4].latitude): fields the type does not declare, date-times
// that do not parse, the value a type error met, and the JSON type a Go
// type takes. Fields are matched as encoding/json matches them.
package jsonpath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/enum"
)

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
)

// MaxNamed bounds how many fields one refusal names.
const MaxNamed = 20

// Unknown names, by path (vehicles[0].break_windows), each field of
// a JSON body that the Go type t it decodes into does not declare, up to
// MaxNamed; nil when there is none. Fields are matched as
// encoding/json matches them (json tags, embedded structs promoted, case
// folded). A value whose type decodes itself (json.Unmarshaler) or is free
// form (any, map[string]any) is not looked into.
func Unknown(body []byte, t reflect.Type) map[string]string {
	return check(body, t, false)
}

// Check is Unknown and Blank in one pass over body: each field the type
// t does not declare (UnknownRefusal), each identifier sent blank
// (BlankRefusal), each time.Time sent as something RFC 3339 does not
// allow (BadTimes), each field sent twice under names that differ
// only in case (RepeatedRefusal: the type takes both as the one field)
// each empty key of a free-form object, a map, at any depth
// (EmptyKeyRefusal) and each optional field of a fixed set of values sent
// as "" (EmptyEnum),
// by path, up to MaxNamed; nil when there is none. A name repeated as
// it is, which decoding loses, is Repeated's to find.
func Check(body []byte, t reflect.Type) map[string]string {
	return check(body, t, true)
}

// Blank names, by path (event_filters.vehicle_ids[2]), each identifier
// of body (a field IsID names, or an entry of such an array) sent as a
// string that is empty or only white space, and each optional field of a
// fixed set of values sent as "" (EmptyEnum), up to MaxNamed; nil when
// there is none. An identifier left out is not named.
func Blank(body []byte, t reflect.Type) map[string]string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	w := walker{blank: map[string]string{}}
	w.enums = w.blank
	w.walk(v, t, "", false)
	if len(w.blank) == 0 {
		return nil
	}
	return w.blank
}

func check(body []byte, t reflect.Type, blank bool) map[string]string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil // the typed decode reports a malformed body
	}
	// with blank (Check), the walk also names each time.Time sent as
	// what time.Parse takes beyond RFC 3339 (an offset of +24:00, a
	// comma before the fraction), which it decodes from
	w := walker{unknown: map[string]string{}}
	if blank {
		w.blank, w.times, w.repeat, w.empty, w.enums = w.unknown, w.unknown, w.unknown, w.unknown, w.unknown
	}
	w.walk(v, t, "", false)
	if len(w.unknown) == 0 {
		return nil
	}
	return w.unknown
}

// walker walks decoded JSON against a Go type; each of its maps, when
// not nil, gets its problems by full path: unknown each field the type
// does not declare, times each time.Time whose value is not an RFC 3339
// date-time, blank each identifier sent blank, repeat each field sent a
// second time under a name in another case, empty each key of a
// free-form object (a map) that is the empty string, enums each optional
// field of a fixed set sent as "" (EmptyEnum). Maps may be shared.
type walker struct {
	unknown, times, blank, repeat, empty, enums, types map[string]string
}

func (w *walker) note(m map[string]string, path, msg string) {
	if m != nil && len(m) < MaxNamed {
		m[path] = msg
	}
}

// walk walks v against t; id says v is an identifier or an array of
// them.
func (w *walker) walk(v any, t reflect.Type, path string, id bool) {
	if id && w.blank != nil {
		if s, ok := v.(string); ok {
			if IsBlank(s) {
				w.note(w.blank, path, BlankRefusal)
			}
			return
		}
	}
	if w.times != nil && v != nil {
		tt := t
		for tt.Kind() == reflect.Pointer {
			tt = tt.Elem()
		}
		if tt == timeType {
			s, ok := v.(string)
			if _, err := apitime.Parse(s); !ok || err != nil {
				w.note(w.times, path, "must be an ISO 8601 date-time with a time zone (RFC 3339)")
			}
			return
		}
	}
	for t.Kind() == reflect.Pointer {
		if t.Implements(unmarshalerType) {
			return
		}
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	if w.types != nil && v != nil && !decodesAs(v, t) {
		w.note(w.types, path, "must be "+KindOf(t))
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var folded map[string]bool // the fields met, when several keys may fold to one
		if w.repeat != nil && len(keys) > 1 {
			folded = make(map[string]bool, len(keys))
		}
		for _, k := range keys {
			lk := strings.ToLower(k)
			f, ok := fields[lk]
			if !ok {
				w.note(w.unknown, join(path, k), UnknownRefusal)
				continue
			}
			if folded != nil {
				if folded[lk] {
					w.note(w.repeat, join(path, k), RepeatedRefusal)
					continue
				}
				folded[lk] = true
			}
			if f.enum != nil && w.enums != nil && obj[k] == "" {
				msg := EmptyValueRefusal
				if len(f.enum) > 0 {
					msg = enum.Refusal(f.enum...)
				}
				w.note(w.enums, join(path, k), msg)
				continue
			}
			w.walk(obj[k], f.t, join(path, k), f.id)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range arr {
			w.walk(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", id)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok || t.Key().Kind() != reflect.String {
			return
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch {
			case k == "" && w.empty != nil:
				w.note(w.empty, join(path, k), EmptyKeyRefusal)
			case t.Elem().Kind() == reflect.Interface && w.empty != nil:
				w.emptyKeys(obj[k], join(path, k))
			default:
				w.walk(obj[k], t.Elem(), join(path, k), false)
			}
		}
	}
}

// emptyKeys notes each empty key of the free-form value v, at any depth.
func (w *walker) emptyKeys(v any, path string) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "" {
				w.note(w.empty, join(path, k), EmptyKeyRefusal)
				continue
			}
			w.emptyKeys(x[k], join(path, k))
		}
	case []any:
		for i, e := range x {
			w.emptyKeys(e, path+"["+strconv.Itoa(i)+"]")
		}
	}
}

// EmptyKeyRefusal is the message for a key of a free-form object
// (metadata, event_data) that is the empty string: a key names its
// value, and an empty one names nothing a reader could ask for.
const EmptyKeyRefusal = "is an empty key: each key of a free-form object needs a name"

// UnknownRefusal is the message for a body field its endpoint does not
// declare, on every endpoint; one that lists the fields it allows adds
// "; allowed: " and the list.
const UnknownRefusal = "unknown field"

// BlankRefusal is the message for an identifier sent blank.
const BlankRefusal = "must not be empty or only white space"

// IsBlank reports whether s, a string or its bytes, is empty or only
// white space (as unicode.IsSpace, what strings.TrimSpace removes). It
// answers at the first byte for an identifier that starts with an ASCII
// letter or digit, so the ingest readers call it on every id.
func IsBlank[S ~string | ~[]byte](s S) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return len(bytes.TrimSpace([]byte(s[i:]))) == 0
		}
		if c != ' ' && (c < '\t' || c > '\r') {
			return false
		}
	}
	return true
}

// ControlRefusal is the message for an identifier holding a control
// character.
const ControlRefusal = "must not contain a control character"

// HasControl reports whether s, a string or its bytes, holds a control
// character: C0 (U+0000 to U+001F, a newline or a tab among them), DEL
// (U+007F) or C1 (U+0080 to U+009F). An identifier never holds one: it
// would break the logs, headers and CSV lines it is written to.
func HasControl[S ~string | ~[]byte](s S) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20 || c == 0x7f:
			return true
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] < 0xa0:
			return true // U+0080 to U+009F in UTF-8
		}
	}
	return false
}

// IsID reports whether the struct field f, of JSON name name, names
// something (a vehicle, driver, trip, device, fleet, stream, geofence,
// delivery, …): a name that is "id" or ends in "_id" or "_ids", or a
// field tagged id:"true" (vehicles, geofences, specific_drivers). The
// value of an identifier, or of each entry of an array of them, must not
// be blank when it is sent (Blank, Check). A tag id:"false" says a field
// of such a name is not one; id:"own", that the field's validator refuses
// it blank itself, in the one message of the field's rule.
func IsID(name string, f reflect.StructField) bool {
	switch f.Tag.Get("id") {
	case "true":
		return true
	case "false", "own":
		return false
	}
	return IDName(name)
}

// IDName reports whether a JSON field or query parameter of that name
// names something: "id", or a name ending in "_id" or "_ids".
func IDName(name string) bool {
	return name == "id" || strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "_ids")
}

// join names member k of the value at path: path.k, or path["k"] (k
// quoted) when k is empty or holds anything but ASCII
// letters, digits, _ and -, so that a path always reads back one way
// (a member named "a.b" is not member b of a).
func join(path, k string) string {
	if !plainName(k) {
		return path + "[" + strconv.Quote(k) + "]"
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

// Param is how a refusal names the query parameter k: k itself, or [""]
// when it is empty (?=1), never an empty name. Dots and brackets are part
// of a parameter's name (focus.point.lat), so only the empty one is
// quoted, as a body's empty member is (see join).
func Param(k string) string {
	if k == "" {
		return `[""]`
	}
	return k
}

func plainName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// field is a struct field as a body's walk needs it: its type, whether
// it is an identifier (IsID) and, for an optional string of a fixed set
// (EmptyEnum), the values it takes.
type field struct {
	t    reflect.Type
	id   bool
	enum []string
}

// jsonFields maps the folded JSON names of a struct's fields, embedded
// structs' promoted, to their types.
func jsonFields(t reflect.Type) map[string]field {
	out := map[string]field{}
	EachField(t, func(name, opts string, f reflect.StructField) {
		out[strings.ToLower(name)] = field{f.Type, IsID(name, f), EmptyEnum(opts, f)}
	})
	return out
}

// EmptyEnum is the set of values of the struct field f, of json tag
// options opts, when "" sent to it must be refused as a value outside
// that set: an optional field (omitempty, not required:"true") of Go type
// string with an enum tag that does not list "". Decoded, such a field
// cannot tell "" from left out, and a client that sends "" has lost its
// value: reading it as absent (the default) would hide that. A required
// field sent "" is its validator's "is required"; a *string field tells
// "" from absent and its validator refuses it. nil for any other field.
//
// An optional string field tagged empty:"refused" (a language, a time
// zone: text with a default when left out) is refused the same way with
// EmptyValueRefusal: the answer is an empty, non-nil set.
func EmptyEnum(opts string, f reflect.StructField) []string {
	if f.Type.Kind() != reflect.String || f.Tag.Get("required") == "true" || !slices.Contains(strings.Split(opts, ","), "omitempty") {
		return nil
	}
	tag, ok := f.Tag.Lookup("enum")
	if !ok || tag == "" {
		if f.Tag.Get("empty") == "refused" {
			return []string{}
		}
		return nil
	}
	vals := strings.Split(tag, ",")
	if slices.Contains(vals, "") {
		return nil
	}
	return vals
}

// EmptyValueRefusal is the message for an optional text field with a
// default sent as "" (EmptyEnum): it would read as left out.
const EmptyValueRefusal = "must not be empty: leave it out for the default"

// EachField calls fn with each field of struct type t as
// encoding/json names it (its json tag's name, else its Go name, and the
// tag's options), walking into embedded structs without a name; fields
// tagged "-" and unexported ones are skipped. The OpenAPI schemas and the
// unknown-field check read fields through it, so they agree.
func EachField(t reflect.Type, fn func(name, opts string, f reflect.StructField)) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				EachField(ft, fn)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fn(name, opts, f)
	}
}

// Field is the JSON path of field, a path as encoding/json's
// UnmarshalTypeError gives it in decoding type t: that path names each
// embedded struct on the way by its Go name (LocationIn.latitude), where
// the JSON object has its fields promoted (latitude), so those names are
// dropped. A path that leaves t's fields is kept from there as given.
func Field(t reflect.Type, field string) string {
	segs := strings.Split(field, ".")
	out := make([]string, 0, len(segs))
	for _, seg := range segs {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			t = nil
			out = append(out, seg)
			continue
		}
		if e, ok := embedded(t, seg); ok {
			t = e
			continue
		}
		t = jsonFields(t)[strings.ToLower(seg)].t
		out = append(out, seg)
	}
	return strings.Join(out, ".")
}

// embedded is the type of t's embedded struct field of Go name name whose
// fields encoding/json promotes (no json name of its own).
func embedded(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.Anonymous || f.Name != name {
			continue
		}
		tag := f.Tag.Get("json")
		if n, _, _ := strings.Cut(tag, ","); n != "" || tag == "-" {
			return nil, false
		}
		return f.Type, true
	}
	return nil, false
}

// Indexed is the path of the value a type error met, with the index
// of every array on the way (locations[3].latitude where encoding/json
// says locations.latitude): the first value at field's path, in document
// order, whose JSON kind is found's ("string", "number 1.5", "object",
// "array", "bool", as UnmarshalTypeError.Value gives it), which is the
// one the decoder stopped at.
func Indexed(body []byte, field, found string) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	kind, _, _ := strings.Cut(found, " ")
	return locate(v, strings.Split(field, "."), kind, "")
}

func locate(v any, segs []string, kind, path string) (string, bool) {
	if len(segs) == 0 && jsonKindOf(v) == kind {
		return path, true
	}
	if arr, ok := v.([]any); ok {
		for i, e := range arr {
			if p, ok := locate(e, segs, kind, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
		return "", false
	}
	obj, ok := v.(map[string]any)
	if !ok || len(segs) == 0 {
		return "", false
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if strings.EqualFold(k, segs[0]) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p, ok := locate(obj[k], segs[1:], kind, join(path, k)); ok {
			return p, true
		}
	}
	return "", false
}

// jsonKindOf names v's JSON kind as UnmarshalTypeError.Value does.
func jsonKindOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// WrongTypes names, by path, each value of body that encoding/json
// would not decode into its field of t (a string for a number, 1.5 or
// 1e3 for an integer, a number past the field's range, an object for an
// array), with the JSON type it must be, and each time.Time sent as
// anything but an RFC 3339 date-time, up to MaxNamed; nil when there is
// none. Decoding stops at the first such value, so a decoder's error
// names one: this names them all.
func WrongTypes(body []byte, t reflect.Type) map[string]string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	w := walker{types: map[string]string{}}
	w.times = w.types
	w.walk(v, t, "", false)
	if len(w.types) == 0 {
		return nil
	}
	return w.types
}

// decodesAs reports whether encoding/json decodes v, a JSON value other
// than null decoded with UseNumber, into a value of type t (no pointer,
// no json.Unmarshaler).
func decodesAs(v any, t reflect.Type) bool {
	if t == numberType {
		switch x := v.(type) {
		case json.Number:
			return true
		case string: // a quoted number decodes into a json.Number
			return isNumber(x) && json.Valid([]byte(x)) && !strings.ContainsAny(x, " \t\r\n")
		}
		return false
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Struct:
		_, ok := v.(map[string]any)
		return ok
	case reflect.Map:
		_, ok := v.(map[string]any)
		return ok
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 { // base64 text
			_, ok := v.(string)
			return ok
		}
		_, ok := v.([]any)
		return ok
	case reflect.Array:
		_, ok := v.([]any)
		return ok
	case reflect.String:
		_, ok := v.(string)
		return ok
	case reflect.Bool:
		_, ok := v.(bool)
		return ok
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		return err == nil && !reflect.Zero(t).OverflowInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		u, err := strconv.ParseUint(string(n), 10, 64)
		return err == nil && !reflect.Zero(t).OverflowUint(u)
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := strconv.ParseFloat(string(n), t.Bits())
		return err == nil
	}
	return true
}

// isNumber reports whether s, valid JSON, is a JSON number.
func isNumber(s string) bool {
	return s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9')
}

var numberType = reflect.TypeFor[json.Number]()

// KindOf is the JSON type a value of Go type t must be: "an array",
// "an object", "a string", "a boolean", "an integer" or "a number" (a
// json.Number's too), by what t holds rather than its name: a named
// string type is "a string".
func KindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == numberType:
		return "a number"
	case t == timeType:
		return "an ISO 8601 date-time with a time zone (RFC 3339)"
	}
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a JSON value"
}

// BadTimes names each time.Time field of t whose value in body is not an
// RFC 3339 date-time (what time.Time decodes), with its full path.
func BadTimes(body []byte, t reflect.Type) map[string]string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	w := walker{times: map[string]string{}}
	w.walk(v, t, "", false)
	return w.times
}

// MayBeBlank reports whether v, a value decoded from JSON, holds an
// identifier (IsID) that is empty or only white space: a fast check, over
// the decoded value, for the routes that decode without DecodeJSON's walk
// of the body. False means no identifier was sent blank; true, that one
// may have been (an empty string is also what an identifier left out
// decodes to): Blank on the body then says which. Parts of v whose type
// holds no identifier (a batch's points) are not looked into.
func MayBeBlank(v any) bool {
	return mayBeBlank(reflect.ValueOf(v), false)
}

func mayBeBlank(v reflect.Value, id bool) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return false
		}
		return mayBeBlank(v.Elem(), id)
	case reflect.String:
		return id && IsBlank(v.String())
	case reflect.Slice, reflect.Array:
		if !id && !holdsIDs(v.Type().Elem()) {
			return false
		}
		for i := range v.Len() {
			if mayBeBlank(v.Index(i), id) {
				return true
			}
		}
	case reflect.Map:
		if !holdsIDs(v.Type().Elem()) {
			return false
		}
		for it := v.MapRange(); it.Next(); {
			if mayBeBlank(it.Value(), false) {
				return true
			}
		}
	case reflect.Struct:
		if !holdsIDs(v.Type()) {
			return false
		}
		for _, f := range structIDs(v.Type()) {
			if mayBeBlank(v.FieldByIndex(f.index), f.id) {
				return true
			}
		}
	}
	return false
}

// structField is a field of a struct that holds identifiers: its index
// (through embedded structs) and whether it is one.
type structField struct {
	index []int
	id    bool
}

var (
	idMu     sync.Mutex
	idFields sync.Map // reflect.Type → []structField, of struct types
	idTypes  sync.Map // reflect.Type → bool: holdsIDs
)

// structIDs lists the fields of struct type t that are identifiers or
// hold some.
func structIDs(t reflect.Type) []structField {
	if fs, ok := idFields.Load(t); ok {
		return fs.([]structField)
	}
	idMu.Lock()
	defer idMu.Unlock()
	learnIDs(t, map[reflect.Type]bool{})
	fs, _ := idFields.Load(t)
	return fs.([]structField)
}

// holdsIDs reports whether a value of type t may hold an identifier.
func holdsIDs(t reflect.Type) bool {
	if b, ok := idTypes.Load(t); ok {
		return b.(bool)
	}
	idMu.Lock()
	defer idMu.Unlock()
	return learnIDs(t, map[reflect.Type]bool{})
}

// learnIDs works out holdsIDs of t, and structIDs of the struct types
// on the way, under idMu; visiting holds the types being worked out
// (a type that holds itself is answered by its other fields).
func learnIDs(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if b, ok := idTypes.Load(t); ok {
		return b.(bool)
	}
	if visiting[t] {
		return false
	}
	visiting[t] = true
	b := false
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		b = learnIDs(t.Elem(), visiting)
	case reflect.Struct:
		var out []structField
		var walk func(t reflect.Type, index []int)
		walk = func(t reflect.Type, index []int) {
			for i := range t.NumField() {
				f := t.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				idx := append(append([]int(nil), index...), i)
				if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
					walk(f.Type, idx)
					continue
				}
				if !f.IsExported() {
					continue
				}
				if name == "" {
					name = f.Name
				}
				if id := IsID(name, f); learnIDs(f.Type, visiting) || id {
					out = append(out, structField{idx, id})
				}
			}
		}
		walk(t, nil)
		idFields.Store(t, out)
		b = len(out) > 0
	}
	delete(visiting, t)
	idTypes.Store(t, b)
	return b
}
