package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"time"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/changelog"
)

// ExportOptions select what Export writes.
type ExportOptions struct {
	// After starts after this revision; 0 exports the whole change log that is left.
	After int64
	// Skip, when set, leaves out the changes of the resources it returns true for (secrets
	// kept in the store, for instance).
	Skip func(resource string) bool
}

// ExportedChange is one line of an export: one committed change (store/changelog).
type ExportedChange = changelog.Change

var _ store.LogReader = (*DB)(nil)

// Export writes the change log of the database file at path as JSON lines (ExportedChange),
// oldest first, from one consistent snapshot. It may run while a server uses the database.
func Export(ctx context.Context, path string, w io.Writer, opts ExportOptions) error {
	return LogFile(path).ReadLog(ctx, func(l store.Log) error {
		cw := changelog.NewWriter(w)
		err := l.Changes(ctx, opts.After, func(ev store.Event) error {
			if opts.Skip != nil && opts.Skip(ev.Object.Resource) {
				return nil
			}
			return cw.Change(ev)
		})
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return cw.Flush()
	})
}

// LogFile is the change log of the database file it names, read by another process than the
// server's (leaselab export), which may be running.
type LogFile string

var _ store.LogReader = LogFile("")

// ReadLog calls read with the file's change log as of one snapshot (store.LogReader). It
// returns read's error, or an error opening or reading the file.
func (f LogFile) ReadLog(ctx context.Context, read func(store.Log) error) error {
	db, err := openFile(ctx, string(f))
	if err != nil {
		return err
	}
	defer db.Close()
	return readLog(ctx, db, read)
}

// ReadLog calls read with the store's change log as of one snapshot (store.LogReader). Writes
// go on meanwhile. It returns read's error, store.ErrClosed after Close, or an error of the
// database.
func (db *DB) ReadLog(ctx context.Context, read func(store.Log) error) error {
	if db.closed.Load() {
		return store.ErrClosed
	}
	return db.noteDamage(readLog(ctx, db.rdb, read))
}

// readLog runs read in one read transaction of conn.
func readLog(ctx context.Context, conn *sql.DB, read func(store.Log) error) error {
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	l := &txLog{tx: tx}
	// The first read fixes the snapshot that every later read of the transaction sees.
	if l.current, l.compacted, err = readRevisions(ctx, tx); err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	return read(l)
}

// txLog is the change log as one read transaction sees it.
type txLog struct {
	tx                 *sql.Tx
	current, compacted int64
}

func (l *txLog) Revision() (current, compacted int64) { return l.current, l.compacted }

func (l *txLog) Changes(ctx context.Context, after int64, fn func(store.Event) error) error {
	rows, err := l.tx.QueryContext(ctx, `SELECT rev, resource, namespace, name, type, create_rev, value, created_at
		FROM changes WHERE rev > ? ORDER BY rev`, after)
	if err != nil {
		return fmt.Errorf("read changes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			ev  store.Event
			typ int
			at  int64
		)
		o := &ev.Object
		if err := rows.Scan(&o.Revision, &o.Resource, &o.Namespace, &o.Name, &typ, &o.CreateRevision, &o.Value, &at); err != nil {
			return fmt.Errorf("read changes: %w", err)
		}
		ev.Type, ev.Time = store.EventType(typ), time.Unix(0, at)
		if err := fn(ev); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read changes: %w", err)
	}
	return nil
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
