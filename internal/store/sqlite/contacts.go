package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/fleethub/fleethub/internal/store"
)

const contactCols = `id, org, env, name, roles, links, dedup_key, doc, created_at, updated_at`

// tokens joins a contact's roles or links into one column: each token
// between newlines, so instr finds "\n<token>\n" exactly.
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

func scanContact(row interface{ Scan(...any) error }) (store.Contact, error) {
	var c store.Contact
	var roles, links, doc string
	var cr, up int64
	if err := row.Scan(&c.ID, &c.Org, &c.Env, &c.Name, &roles, &links, &c.Key, &doc, &cr, &up); err != nil {
		return c, err
	}
	c.Roles, c.Links, c.Doc, c.CreatedAt, c.UpdatedAt = untokens(roles), untokens(links), []byte(doc), fromMS(cr), fromMS(up)
	return c, nil
}

func contactErr(op string, err error) error {
	if strings.Contains(err.Error(), "UNIQUE") {
		return fmt.Errorf("sqlite: %s: %w", op, store.ErrConflict)
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// CreateContact inserts a contact; ErrConflict for a taken key.
func (s *Store) CreateContact(ctx context.Context, c store.Contact) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO contacts(`+contactCols+`) VALUES (?,?,?,?,?,?,?,?,?,?)`,
		c.ID, c.Org, c.Env, c.Name, tokens(c.Roles), tokens(c.Links), c.Key, string(c.Doc), ms(c.CreatedAt), ms(c.UpdatedAt))
	if err != nil {
		return contactErr("create contact", err)
	}
	return nil
}

// GetContact reads a contact of the scope.
func (s *Store) GetContact(ctx context.Context, sc store.Scope, id string) (store.Contact, error) {
	c, err := scanContact(s.r.QueryRowContext(ctx, `SELECT `+contactCols+` FROM contacts WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return c, store.ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("sqlite: get contact: %w", err)
	}
	return c, nil
}

// ListContacts lists a scope's contacts, oldest first.
func (s *Store) ListContacts(ctx context.Context, f store.ContactFilter) ([]store.Contact, error) {
	q := `SELECT ` + contactCols + ` FROM contacts WHERE org = ? AND env = ?`
	args := []any{f.Org, f.Env}
	if f.Role != "" {
		q += ` AND instr(roles, ?) > 0`
		args = append(args, "\n"+f.Role+"\n")
	}
	if f.Link != "" {
		q += ` AND instr(links, ?) > 0`
		args = append(args, "\n"+f.Link+"\n")
	}
	if f.AfterID != "" {
		q += ` AND (created_at > ? OR (created_at = ? AND id > ?))`
		args = append(args, ms(f.AfterTime), ms(f.AfterTime), f.AfterID)
	}
	q += ` ORDER BY created_at, id`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list contacts: %w", err)
	}
	defer rows.Close()
	out := []store.Contact{}
	for rows.Next() {
		c, err := scanContact(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list contacts: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list contacts: %w", err)
	}
	return out, nil
}

// UpdateContact replaces a contact; its creation time stays.
func (s *Store) UpdateContact(ctx context.Context, c store.Contact) error {
	res, err := s.w.ExecContext(ctx, `UPDATE contacts SET name = ?, roles = ?, links = ?, dedup_key = ?, doc = ?, updated_at = ? WHERE id = ? AND org = ? AND env = ?`,
		c.Name, tokens(c.Roles), tokens(c.Links), c.Key, string(c.Doc), ms(c.UpdatedAt), c.ID, c.Org, c.Env)
	if err != nil {
		return contactErr("update contact", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// DeleteContact deletes a contact.
func (s *Store) DeleteContact(ctx context.Context, sc store.Scope, id string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM contacts WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env)
	if err != nil {
		return fmt.Errorf("sqlite: delete contact: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}
