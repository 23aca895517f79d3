// Package enum words the refusal of a value outside a field's fixed set of
// values, so that the API can tell it from other validation problems.
//
// A validator puts Refusal(allowed) as the message of the field; the API
// answers invalid_request when every problem of a request is such a
// refusal (an unknown value of a known field, as a wrong type or malformed
// JSON is) and validation_failed otherwise (docs/api.md). The message is
// the mark: it always starts with Prefix and lists the allowed values.
package enum

import (
	"slices"
	"strings"
)

// Prefix starts every refusal of a value outside a fixed set.
const Prefix = "must be one of "

// Refusal is the message for a value that is not one of allowed:
// "must be one of a, b, c".
func Refusal(allowed ...string) string {
	return Prefix + strings.Join(allowed, ", ")
}

// Is reports whether msg refuses a value outside a fixed set.
func Is(msg string) bool { return strings.HasPrefix(msg, Prefix) }

// All reports whether fields holds at least one problem and every one of
// them refuses a value outside a fixed set.
func All(fields map[string]string) bool {
	for _, m := range fields {
		if !Is(m) {
			return false
		}
	}
	return len(fields) > 0
}

// Required checks a required value against allowed: "" when it is one of
// them, "is required" when it is empty (a missing field, not an unknown
// value), the refusal otherwise.
func Required(v string, allowed ...string) string {
	switch {
	case v == "":
		return "is required"
	case slices.Contains(allowed, v):
		return ""
	}
	return Refusal(allowed...)
}
