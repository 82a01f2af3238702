package sqlite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/leaselab/leaselab/store"
)

// noteWriteFailure remembers why the last commit failed (a full disk, an I/O error), or with
// nil that one succeeded. A caller's own mistake (a constraint, a precondition) never comes
// here.
func (db *DB) noteWriteFailure(err error) {
	if err == nil {
		if db.writeFailure.Load() != nil {
			db.writeFailure.Store(nil)
			db.logger.Info("store writes again", slog.String(logKeyPath, db.path))
		}
		return
	}
	if errors.Is(err, store.ErrClosed) || errors.Is(err, context.Canceled) {
		return
	}
	db.writeFailure.Store(&err)
}

// WriteHealth returns nil when the store can write, else why it cannot: the file is damaged,
// or the last commit failed. A failed commit is the verdict until a commit succeeds: no smaller
// write tried on the side can say that a client's will fit. It implements
// store.WriteHealthReporter.
func (db *DB) WriteHealth(context.Context) error {
	if err := db.Damaged(); err != nil {
		return err
	}
	if failed := db.writeFailure.Load(); failed != nil {
		return fmt.Errorf("the store cannot write: %w", *failed)
	}
	return nil
}

var _ store.WriteHealthReporter = (*DB)(nil)
