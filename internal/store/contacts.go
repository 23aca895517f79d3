package store

import (
	"context"
	"time"
)

// Contact is a stored person of an organization's directory; Doc is the
// JSON of the resource. Roles and Links are kept beside the document so
// listings can filter on them: each is a list of tokens (a role, or
// "driver:<id>", "vehicle:<id>", "for:<driver id>").
type Contact struct {
	ID    string
	Org   string
	Env   string
	Name  string
	Roles []string
	Links []string
	// Key identifies the person within the scope (two contacts with the
	// same key are duplicates): CreateContact and UpdateContact answer
	// ErrConflict for a key another contact of the scope holds.
	Key       string
	Doc       []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ContactFilter selects contacts of a scope, oldest first. Role and Link
// match one token each when set. After continues a listing after the
// contact with that creation time and id.
type ContactFilter struct {
	Scope
	Role      string
	Link      string
	AfterTime time.Time
	AfterID   string
	Limit     int // 0: every match
}

// Contacts stores the people directory.
type Contacts interface {
	CreateContact(ctx context.Context, c Contact) error
	GetContact(ctx context.Context, s Scope, id string) (Contact, error)
	ListContacts(ctx context.Context, f ContactFilter) ([]Contact, error)
	// UpdateContact replaces a contact of the scope; ErrNotFound when
	// absent.
	UpdateContact(ctx context.Context, c Contact) error
	DeleteContact(ctx context.Context, s Scope, id string) error
}
