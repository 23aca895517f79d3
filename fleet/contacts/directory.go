package contacts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/pagecursor"
	"github.com/fleethub/fleethub/internal/store"
)

// Errors of the directory; api/contacts maps them to codes.
var (
	ErrNotFound  = errors.New("contacts: contact not found")
	ErrBadCursor = errors.New("contacts: invalid cursor")
)

// ValidationError is bad input; Fields maps a field path to a message.
type ValidationError struct {
	Fields map[string]string
}

func (e *ValidationError) Error() string { return "contacts: invalid input" }

// Store keeps contacts.
type Store interface {
	CreateContact(ctx context.Context, c store.Contact) error
	GetContact(ctx context.Context, s store.Scope, id string) (store.Contact, error)
	ListContacts(ctx context.Context, f store.ContactFilter) ([]store.Contact, error)
	UpdateContact(ctx context.Context, c store.Contact) error
	DeleteContact(ctx context.Context, s store.Scope, id string) error
}

// Directory is the contacts service.
type Directory struct {
	st  Store
	now func() time.Time
}

// New makes the directory; a nil now is time.Now.
func New(st Store, now func() time.Time) *Directory {
	if now == nil {
		now = time.Now
	}
	return &Directory{st: st, now: now}
}

// Create validates and stores a new contact.
func (d *Directory) Create(ctx context.Context, sc store.Scope, b Body) (Contact, error) {
	if err := d.check(ctx, sc, &b, ""); err != nil {
		return Contact{}, err
	}
	now := apitime.Of(d.now())
	var idb [10]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return Contact{}, fmt.Errorf("contacts: id: %w", err)
	}
	c := fromBody("con_"+hex.EncodeToString(idb[:]), &b, now, now)
	rec, err := record(sc, &c, &b)
	if err != nil {
		return Contact{}, err
	}
	if err := d.st.CreateContact(ctx, rec); err != nil {
		return Contact{}, storeErr(err)
	}
	return c, nil
}

// Get reads a contact.
func (d *Directory) Get(ctx context.Context, sc store.Scope, id string) (Contact, error) {
	r, err := d.st.GetContact(ctx, sc, id)
	if err != nil {
		return Contact{}, storeErr(err)
	}
	return decode(r)
}

// Replace replaces a contact with b; the creation time stays and a
// location b does not carry is kept.
func (d *Directory) Replace(ctx context.Context, sc store.Scope, id string, b Body) (Contact, error) {
	old, err := d.Get(ctx, sc, id)
	if err != nil {
		return Contact{}, err
	}
	if err := d.check(ctx, sc, &b, id); err != nil {
		return Contact{}, err
	}
	if b.Location == nil {
		b.Location = old.Location
	}
	c := fromBody(id, &b, old.CreatedAt, apitime.Of(d.now()))
	rec, err := record(sc, &c, &b)
	if err != nil {
		return Contact{}, err
	}
	if err := d.st.UpdateContact(ctx, rec); err != nil {
		return Contact{}, storeErr(err)
	}
	return c, nil
}

// SetLocation records a contact's last known location, reported now.
func (d *Directory) SetLocation(ctx context.Context, sc store.Scope, id string, l Location) (Contact, error) {
	bad := map[string]string{}
	l.validate(bad, "")
	if len(bad) > 0 {
		fields := map[string]string{}
		for k, v := range bad {
			fields[strings.TrimPrefix(k, ".")] = v
		}
		return Contact{}, &ValidationError{Fields: fields}
	}
	c, err := d.Get(ctx, sc, id)
	if err != nil {
		return Contact{}, err
	}
	now := apitime.Of(d.now())
	l.ReportedAt = &now
	c.Location, c.UpdatedAt = &l, now
	b := c.body()
	rec, err := record(sc, &c, &b)
	if err != nil {
		return Contact{}, err
	}
	if err := d.st.UpdateContact(ctx, rec); err != nil {
		return Contact{}, storeErr(err)
	}
	return c, nil
}

// Delete removes a contact. Alerts keep their own record of whom they
// reached, so deleting a contact an alert notified leaves the alert
// intact.
func (d *Directory) Delete(ctx context.Context, sc store.Scope, id string) error {
	return storeErr(d.st.DeleteContact(ctx, sc, id))
}

// Query selects a page of contacts.
type Query struct {
	Role                string
	DriverID            string
	VehicleID           string
	EmergencyContactFor string
	Cursor              string
	Limit               int // 1-200
}

// List answers a page of contacts, oldest first. A listing filters on one
// link at most: the first of driver, vehicle and emergency_contact_for.
func (d *Directory) List(ctx context.Context, sc store.Scope, q Query) (List, error) {
	f := store.ContactFilter{Scope: sc, Role: q.Role, Limit: q.Limit + 1}
	hash := pagecursor.Hash("contacts", sc.Org, sc.Env, q.Role, q.DriverID, q.VehicleID, q.EmergencyContactFor)
	switch {
	case q.DriverID != "":
		f.Link = "driver:" + q.DriverID
	case q.VehicleID != "":
		f.Link = "vehicle:" + q.VehicleID
	case q.EmergencyContactFor != "":
		f.Link = "for:" + q.EmergencyContactFor
	}
	if q.Cursor != "" {
		t, id, err := decodeCursor(q.Cursor, hash)
		if err != nil {
			return List{}, err
		}
		f.AfterTime, f.AfterID = t, id
	}
	rs, err := d.st.ListContacts(ctx, f)
	if err != nil {
		return List{}, err
	}
	out := List{Contacts: []Contact{}, Pagination: Pagination{Limit: q.Limit}}
	for i, r := range rs {
		if i == q.Limit {
			last := rs[i-1]
			s := encodeCursor(last.CreatedAt, last.ID, hash)
			out.Pagination.NextCursor, out.Pagination.HasMore = &s, true
			break
		}
		c, err := decode(r)
		if err != nil {
			return List{}, err
		}
		out.Contacts = append(out.Contacts, c)
	}
	return out, nil
}

// WithRole answers every contact of the scope holding role.
func (d *Directory) WithRole(ctx context.Context, sc store.Scope, role string) ([]Contact, error) {
	return d.all(ctx, store.ContactFilter{Scope: sc, Role: role})
}

// EmergencyContactsOf answers the emergency contacts of a driver, named
// by driver id or by contact id.
func (d *Directory) EmergencyContactsOf(ctx context.Context, sc store.Scope, driverID string) ([]Contact, error) {
	return d.all(ctx, store.ContactFilter{Scope: sc, Role: "emergency_contact", Link: "for:" + driverID})
}

// ForDriver answers the contacts linked to a driver id.
func (d *Directory) ForDriver(ctx context.Context, sc store.Scope, driverID string) ([]Contact, error) {
	return d.all(ctx, store.ContactFilter{Scope: sc, Link: "driver:" + driverID})
}

// ForVehicle answers the contacts linked to a vehicle id.
func (d *Directory) ForVehicle(ctx context.Context, sc store.Scope, vehicleID string) ([]Contact, error) {
	return d.all(ctx, store.ContactFilter{Scope: sc, Link: "vehicle:" + vehicleID})
}

func (d *Directory) all(ctx context.Context, f store.ContactFilter) ([]Contact, error) {
	rs, err := d.st.ListContacts(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]Contact, 0, len(rs))
	for _, r := range rs {
		c, err := decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// check validates b; an emergency contact naming a contact id must name a
// contact of this scope (self is the contact being replaced).
func (d *Directory) check(ctx context.Context, sc store.Scope, b *Body, self string) error {
	bad := b.validate()
	for i, id := range b.Links.EmergencyContactFor {
		if !strings.HasPrefix(id, "con_") || bad[fmt.Sprintf("links.emergency_contact_for[%d]", i)] != "" {
			continue
		}
		if _, err := d.st.GetContact(ctx, sc, id); id == self || errors.Is(err, store.ErrNotFound) {
			bad[fmt.Sprintf("links.emergency_contact_for[%d]", i)] = "names no other contact of this organization"
		} else if err != nil {
			return err
		}
	}
	if len(bad) > 0 {
		return &ValidationError{Fields: bad}
	}
	return nil
}

func fromBody(id string, b *Body, created, updated time.Time) Contact {
	return Contact{ContactID: id, Name: b.Name, Roles: b.Roles, Channels: b.Channels, HomeArea: b.HomeArea, Location: b.Location,
		Links: *b.Links, QuietHours: b.QuietHours, Language: b.Language, CreatedAt: created, UpdatedAt: updated}
}

// body is the body that makes c.
func (c *Contact) body() Body {
	l := c.Links
	return Body{Name: c.Name, Roles: c.Roles, Channels: c.Channels, HomeArea: c.HomeArea, Location: c.Location, Links: &l,
		QuietHours: c.QuietHours, Language: c.Language}
}

// record is the stored form of c.
func record(sc store.Scope, c *Contact, b *Body) (store.Contact, error) {
	doc, err := json.Marshal(c)
	if err != nil {
		return store.Contact{}, fmt.Errorf("contacts: encoding %s: %w", c.ContactID, err)
	}
	var links []string
	for _, id := range c.Links.DriverIDs {
		links = append(links, "driver:"+id)
	}
	for _, id := range c.Links.VehicleIDs {
		links = append(links, "vehicle:"+id)
	}
	for _, id := range c.Links.EmergencyContactFor {
		links = append(links, "for:"+id)
	}
	return store.Contact{ID: c.ContactID, Org: sc.Org, Env: sc.Env, Name: c.Name, Roles: c.Roles, Links: links, Key: b.key(),
		Doc: doc, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}, nil
}

func decode(r store.Contact) (Contact, error) {
	var c Contact
	if err := json.Unmarshal(r.Doc, &c); err != nil {
		return c, fmt.Errorf("contacts: stored contact %s: %w", r.ID, err)
	}
	return c, nil
}

// storeErr maps the store's errors: a taken key is a duplicate.
func storeErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return ErrNotFound
	case errors.Is(err, store.ErrConflict):
		return &ValidationError{Fields: map[string]string{"name": "a contact with this name, sms, voice, email and links.driver_ids already exists"}}
	}
	return err
}

// encodeCursor answers the cursor of the page after the contact created
// at t with id, under the listing's filters (pagecursor.Hash).
func encodeCursor(t time.Time, id, filters string) string {
	return pagecursor.Seal(strconv.FormatInt(t.UnixMilli(), 10)+":"+id, filters)
}

// decodeCursor answers the position of a cursor of the listing with these
// filters; ErrBadCursor when s is not one (or was made with others).
func decodeCursor(s, filters string) (time.Time, string, error) {
	pos, ok := pagecursor.Open(s, filters)
	if !ok {
		return time.Time{}, "", ErrBadCursor
	}
	ms, id, ok := strings.Cut(pos, ":")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || !strings.HasPrefix(id, "con_") {
		return time.Time{}, "", ErrBadCursor
	}
	return time.UnixMilli(n).UTC(), id, nil
}
