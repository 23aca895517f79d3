package sqlstore

import (
	"context"
	"strconv"
	"strings"

	"github.com/fleethub/fleethub/internal/store"
)

// The people directory (store.Contacts).

const contactCols = `id, org, env, name, roles, links, dedup_key, doc, created_at, updated_at`

// tokens joins a contact's roles or links into one column: each token
// between newlines, so a search for "\n<token>\n" finds it exactly.
func tokens(ts []string) string {
	if len(ts) == 0 {
		return "\n"
	}
	return "\n" + strings.Join(ts, "\n") + "\n"
}

func untokens(s string) []string {
	s = strings.Trim(s, "\n")
	if s == "" {
		return []string{}
	}
	return strings.Split(s, "\n")
}

func scanContact(row Row) (store.Contact, error) {
	var c store.Contact
	var roles, links, doc string
	var cr, up int64
	if err := row.Scan(&c.ID, &c.Org, &c.Env, &c.Name, &roles, &links, &c.Key, &doc, &cr, &up); err != nil {
		return c, err
	}
	c.Roles, c.Links, c.Doc, c.CreatedAt, c.UpdatedAt = untokens(roles), untokens(links), []byte(doc), FromMS(cr), FromMS(up)
	return c, nil
}

// CreateContact inserts a contact; ErrConflict for a taken key.
func (s *Store) CreateContact(ctx context.Context, c store.Contact) error {
	_, err := s.w.Exec(ctx, `INSERT INTO contacts(`+contactCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Org, c.Env, c.Name, tokens(c.Roles), tokens(c.Links), c.Key, string(c.Doc), MS(c.CreatedAt), MS(c.UpdatedAt))
	return s.wrap("create contact", err)
}

// GetContact reads a contact of the scope.
func (s *Store) GetContact(ctx context.Context, sc store.Scope, id string) (store.Contact, error) {
	c, err := scanContact(s.r.QueryRow(ctx, `SELECT `+contactCols+` FROM contacts WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env))
	return c, s.wrap("get contact", err)
}

// ListContacts lists a scope's contacts, oldest first.
func (s *Store) ListContacts(ctx context.Context, f store.ContactFilter) ([]store.Contact, error) {
	q := `SELECT ` + contactCols + ` FROM contacts WHERE org = ? AND env = ?`
	args := []any{f.Org, f.Env}
	if f.Role != "" {
		q += ` AND ` + s.d.Contains("roles")
		args = append(args, "\n"+f.Role+"\n")
	}
	if f.Link != "" {
		q += ` AND ` + s.d.Contains("links")
		args = append(args, "\n"+f.Link+"\n")
	}
	if f.AfterID != "" {
		q += ` AND (created_at > ? OR (created_at = ? AND id > ?))`
		args = append(args, MS(f.AfterTime), MS(f.AfterTime), f.AfterID)
	}
	q += ` ORDER BY created_at, id`
	if f.Limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(f.Limit)
	}
	rows, err := s.r.Query(ctx, q, args...)
	out, err := collect([]store.Contact{}, rows, err, scanContact)
	return out, s.wrap("list contacts", err)
}

// UpdateContact replaces a contact, its creation time aside; ErrNotFound
// when absent, ErrConflict for a key another contact holds.
func (s *Store) UpdateContact(ctx context.Context, c store.Contact) error {
	n, err := s.w.Exec(ctx, `UPDATE contacts SET name = ?, roles = ?, links = ?, dedup_key = ?, doc = ?, updated_at = ? WHERE id = ? AND org = ? AND env = ?`,
		c.Name, tokens(c.Roles), tokens(c.Links), c.Key, string(c.Doc), MS(c.UpdatedAt), c.ID, c.Org, c.Env)
	return s.wrap("update contact", changed(n, err, store.ErrNotFound))
}

// DeleteContact deletes a contact; ErrNotFound when absent.
func (s *Store) DeleteContact(ctx context.Context, sc store.Scope, id string) error {
	n, err := s.w.Exec(ctx, `DELETE FROM contacts WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env)
	return s.wrap("delete contact", changed(n, err, store.ErrNotFound))
}
