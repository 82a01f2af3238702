package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/changelog"
)

// Import builds a new database at path from a change log file (store/changelog: a recording or
// a plain export), with the revisions and commit times of its lines: each line becomes a row of
// the change log (its previous revision found from the object's earlier lines), the current
// objects are each object's last state, the revision counter stands at the last line's
// revision and the log counts as compacted just below the first one, so that a watch from
// further back gets 410 Expired as it would from the original.
//
// check, when not nil, judges the header and every change beyond the format's rules
// (changelog.Checker): what the objects are is the caller's to know, not the store's.
//
// It returns the file's summary. It fails when path exists, when the file holds no change,
// with a *changelog.LineError for a line that is not a change, does not follow the ones
// before it or fails check, or with an error of the database; after a failure nothing is
// left at path.
func Import(ctx context.Context, path string, r io.Reader, check changelog.Checker) (changelog.Header, error) {
	if _, err := os.Stat(path); err == nil {
		return changelog.Header{}, fmt.Errorf("import: %s already exists", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return changelog.Header{}, fmt.Errorf("import: %w", err)
	}
	if err := checkPath(path); err != nil {
		return changelog.Header{}, err
	}
	cr := changelog.NewReader(r)
	if check != nil {
		cr.Check(check)
	}
	sum, err := importFile(ctx, path, cr)
	if err != nil {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(path + suffix)
		}
	}
	return sum, err
}

// importFile creates the database at path and fills it from cr in one transaction.
func importFile(ctx context.Context, path string, cr *changelog.Reader) (changelog.Header, error) {
	if err := createPrivate(path); err != nil {
		return changelog.Header{}, fmt.Errorf("create database: %w", err)
	}
	// A DB of the writer connection alone: enough for the migrations, no writer goroutine.
	db := &DB{path: path, opts: Options{}.withDefaults(), logger: slog.New(slog.DiscardHandler)}
	var err error
	if db.wdb, err = sql.Open("sqlite", dsn(path, true)); err != nil {
		return changelog.Header{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.wdb.Close()
	db.wdb.SetMaxOpenConns(1)
	if err := db.migrate(ctx); err != nil {
		return changelog.Header{}, err
	}
	tx, err := db.wdb.BeginTx(ctx, nil)
	if err != nil {
		return changelog.Header{}, fmt.Errorf("import: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	sum, err := insertChanges(ctx, tx, cr)
	if err != nil {
		return sum, err
	}
	if err := finishImport(ctx, tx, sum.FirstRevision); err != nil {
		return sum, err
	}
	if err := tx.Commit(); err != nil {
		return sum, fmt.Errorf("import: commit: %w", err)
	}
	return sum, db.wdb.Close()
}

// insertChanges writes every change cr reads as a row of the change log.
func insertChanges(ctx context.Context, tx *sql.Tx, cr *changelog.Reader) (changelog.Header, error) {
	ins, err := tx.PrepareContext(ctx, sqlInsertChange)
	if err != nil {
		return changelog.Header{}, fmt.Errorf("import: %w", err)
	}
	defer ins.Close()
	for {
		ev, err := cr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return cr.Summary(), err
		}
		var prev int64
		if ev.Prev != nil {
			prev = ev.Prev.Revision
		}
		o := ev.Object
		if _, err := ins.ExecContext(ctx, o.Revision, o.Resource, o.Namespace, o.Name, int(ev.Type),
			o.CreateRevision, prev, o.Value, ev.Time.UnixNano()); err != nil {
			return cr.Summary(), fmt.Errorf("import revision %d: %w", o.Revision, err)
		}
	}
	sum := cr.Summary()
	if sum.Changes == 0 {
		return sum, errors.New("import: the file holds no change")
	}
	return sum, nil
}

// finishImport rebuilds the current objects from each object's last change (none for an
// object last deleted) and marks the log compacted just below its first revision. The rows
// inserted with their own revisions have already moved the AUTOINCREMENT counter to the last.
func finishImport(ctx context.Context, tx *sql.Tx, first int64) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO objects (resource, namespace, name, rev, create_rev, value)
		SELECT resource, namespace, name, rev, create_rev, value FROM changes AS c
		WHERE type != ? AND rev = (SELECT max(rev) FROM changes
			WHERE resource = c.resource AND namespace = c.namespace AND name = c.name)`, int(store.Deleted)); err != nil {
		return fmt.Errorf("import: current objects: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key IN ('compacted', 'compact_cursor')`, first-1); err != nil {
		return fmt.Errorf("import: compacted revision: %w", err)
	}
	return nil
}
