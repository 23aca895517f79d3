package emergency

import (
	"errors"
	"fmt"
)

// Errors of the services; api/emergency maps them to codes.
var (
	ErrIncidentNotFound = errors.New("emergency: incident not found")
	ErrAlertNotFound    = errors.New("emergency: alert not found")
	// ErrChanged is an alert changed by another request between its read
	// and its write.
	ErrChanged = errors.New("emergency: the alert changed meanwhile")
	// ErrIncidentChanged is an incident that other requests kept changing
	// between its read and its write, every time it was read again.
	ErrIncidentChanged = errors.New("emergency: the incident changed meanwhile")
	// ErrNoGateway is a channel that needs a gateway none is configured
	// for.
	ErrNoGateway = errors.New("emergency: no notification gateway configured (--notify-url)")
	// ErrNoBus is an event (an in_app_alert delivery, an automated or an
	// escalation action) that needs the event bus none is configured for.
	ErrNoBus = errors.New("emergency: no event bus configured")
	// ErrRetrying is a queued notification whose attempt failed and that
	// will be tried again.
	ErrRetrying = errors.New("emergency: gateway attempt failed, retrying")
)

// ValidationError is bad input; Fields maps a field path to a message.
type ValidationError struct {
	Fields map[string]string
}

func (e *ValidationError) Error() string { return "emergency: invalid input" }

// TransitionError is a move the state of an incident or an alert does not
// allow.
type TransitionError struct {
	From string // the current status
	// To is the status asked for; for an alert "cancelled" or
	// "acknowledged".
	To string
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("emergency: %s cannot become %s", e.From, e.To)
}
