package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/fleethub/fleethub/internal/store"
)

const contactCols = `id, org, env, name, roles, links, dedup_key, doc, created_at, updated_at`

// tokens joins a contact's roles or links into one column: each token
// between newlines, so strpos finds "\n<token>\n" exactly.
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

// CreateContact inserts a contact; ErrConflict for a taken key.
func (s *Store) CreateContact(ctx context.Context, c store.Contact) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO contacts(`+contactCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`,
		c.ID, c.Org, c.Env, c.Name, tokens(c.Roles), tokens(c.Links), c.Key, string(c.Doc), ms(c.CreatedAt), ms(c.UpdatedAt))
	return wrap("create contact", err)
}

// GetContact reads a contact of the scope.
func (s *Store) GetContact(ctx context.Context, sc store.Scope, id string) (store.Contact, error) {
	c, err := scanContact(s.pool.QueryRow(ctx, `SELECT `+contactCols+` FROM contacts WHERE id = $1 AND org = $2 AND env = $3`, id, sc.Org, sc.Env))
	return c, wrap("get contact", err)
}

// ListContacts lists a scope's contacts, oldest first.
func (s *Store) ListContacts(ctx context.Context, f store.ContactFilter) ([]store.Contact, error) {
	q := `SELECT ` + contactCols + ` FROM contacts WHERE org = $1 AND env = $2`
	args := []any{f.Org, f.Env}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.Role != "" {
		q += ` AND strpos(roles, ` + arg("\n"+f.Role+"\n") + `) > 0`
	}
	if f.Link != "" {
		q += ` AND strpos(links, ` + arg("\n"+f.Link+"\n") + `) > 0`
	}
	if f.AfterID != "" {
		t := arg(ms(f.AfterTime))
		q += ` AND (created_at > ` + t + ` OR (created_at = ` + t + ` AND id > ` + arg(f.AfterID) + `))`
	}
	q += ` ORDER BY created_at, id`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, wrap("list contacts", err)
	}
	defer rows.Close()
	out := []store.Contact{}
	for rows.Next() {
		c, err := scanContact(rows)
		if err != nil {
			return nil, wrap("list contacts", err)
		}
		out = append(out, c)
	}
	return out, wrap("list contacts", rows.Err())
}

// UpdateContact replaces a contact; its creation time stays.
func (s *Store) UpdateContact(ctx context.Context, c store.Contact) error {
	tag, err := s.pool.Exec(ctx, `UPDATE contacts SET name = $1, roles = $2, links = $3, dedup_key = $4, doc = $5, updated_at = $6 WHERE id = $7 AND org = $8 AND env = $9`,
		c.Name, tokens(c.Roles), tokens(c.Links), c.Key, string(c.Doc), ms(c.UpdatedAt), c.ID, c.Org, c.Env)
	if err != nil {
		return wrap("update contact", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("update contact", store.ErrNotFound)
	}
	return nil
}

// DeleteContact deletes a contact.
func (s *Store) DeleteContact(ctx context.Context, sc store.Scope, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM contacts WHERE id = $1 AND org = $2 AND env = $3`, id, sc.Org, sc.Env)
	if err != nil {
		return wrap("delete contact", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("delete contact", store.ErrNotFound)
	}
	return nil
}
