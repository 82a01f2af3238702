package sqlite

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/leaselab/leaselab/store"
)

// ExportOptions select what Export writes.
type ExportOptions struct {
	// After starts after this revision; 0 exports the whole change log that is left.
	After int64
	// Skip, when set, leaves out the changes of the resources it returns true for (secrets
	// kept in the store, for instance).
	Skip func(resource string) bool
}

// ExportedChange is one line of an export: one committed change.
type ExportedChange struct {
	Revision       int64  `json:"revision"`
	Type           string `json:"type"`
	Time           string `json:"time"`
	Resource       string `json:"resource"`
	Namespace      string `json:"namespace,omitempty"`
	Name           string `json:"name"`
	CreateRevision int64  `json:"createRevision"`
	// Object is the object after the change (the last state for a delete), as stored: JSON
	// inline, anything else as a base64 string.
	Object json.RawMessage `json:"object,omitempty"`
}

// Export writes the change log of the database file at path as JSON lines (ExportedChange),
// oldest first, from one consistent snapshot. It may run while a server uses the database.
func Export(ctx context.Context, path string, w io.Writer, opts ExportOptions) error {
	db, err := openFile(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT rev, resource, namespace, name, type, create_rev, value, created_at
		FROM changes WHERE rev > ? ORDER BY rev`, opts.After)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer rows.Close()
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for rows.Next() {
		var (
			c     ExportedChange
			typ   int
			value []byte
			at    int64
		)
		if err := rows.Scan(&c.Revision, &c.Resource, &c.Namespace, &c.Name, &typ, &c.CreateRevision, &value, &at); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if opts.Skip != nil && opts.Skip(c.Resource) {
			continue
		}
		c.Type = store.EventType(typ).String()
		c.Time = time.Unix(0, at).UTC().Format(time.RFC3339Nano)
		c.Object = rawObject(value)
		if err := enc.Encode(&c); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return bw.Flush()
}

// ReadObjects returns the current objects of one resource in the database file at path, for
// commands that run beside (or without) the server.
func ReadObjects(ctx context.Context, path, resource string) ([]store.Object, error) {
	db, err := openFile(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT namespace, name, rev, create_rev, value FROM objects
		WHERE resource = ? ORDER BY namespace, name`, resource)
	if err != nil {
		return nil, fmt.Errorf("read objects: %w", err)
	}
	defer rows.Close()
	var out []store.Object
	for rows.Next() {
		o := store.Object{Key: store.Key{Resource: resource}}
		if err := rows.Scan(&o.Namespace, &o.Name, &o.Revision, &o.CreateRevision, &o.Value); err != nil {
			return nil, fmt.Errorf("read objects: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read objects: %w", err)
	}
	return out, nil
}

func rawObject(value []byte) json.RawMessage {
	if len(value) == 0 {
		return nil
	}
	if json.Valid(value) {
		return json.RawMessage(value)
	}
	b, _ := json.Marshal(value)
	return b
}
