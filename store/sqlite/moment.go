package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/leaselab/leaselab/store"
)

// RevisionAt returns the last revision committed at or before t: 0 when nothing was committed
// by then. It returns a *store.CompactedError when that revision is below the compacted one
// (the state at t is gone), store.ErrClosed after Close, or an error of the database.
//
// Changes carry their commit time, which the one writer stamps in revision order, so the
// revision is found by a binary search over the log's rowid rather than by a scan or an index
// on the time (which every write would pay for). With a clock that went backwards the answer
// is one of the revisions committed around t.
func (db *DB) RevisionAt(ctx context.Context, t time.Time) (int64, error) {
	if db.closed.Load() {
		return 0, store.ErrClosed
	}
	tx, err := db.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, db.readErr("begin revision at", err)
	}
	defer func() { _ = tx.Rollback() }()
	current, compacted, err := readRevisions(ctx, tx)
	if err != nil {
		return 0, db.readErr("revision at", err)
	}
	ns := t.UnixNano()
	// lo ends at the first revision committed after t (current+1 when none was).
	lo, hi := compacted+1, current+1
	for lo < hi {
		mid := lo + (hi-lo)/2
		rev, at, err := firstChangeFrom(ctx, tx, mid)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			hi = mid
		case err != nil:
			return 0, db.readErr("revision at", err)
		case at > ns:
			hi = mid
		default:
			lo = rev + 1
		}
	}
	rev := lo - 1
	if rev > compacted || compacted == 0 {
		return rev, nil
	}
	// t comes before every change after the compacted revision: its state is known only when
	// the compacted revision itself was committed by t (its row stays unless it was a delete).
	var at int64
	err = tx.QueryRowContext(ctx, `SELECT created_at FROM changes WHERE rev = ?`, compacted).Scan(&at)
	switch {
	case err == nil && at <= ns:
		return compacted, nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return 0, db.readErr("revision at", err)
	}
	return 0, &store.CompactedError{Requested: rev, Compacted: compacted}
}

// firstChangeFrom reads the revision and commit time of the first change at or after rev;
// sql.ErrNoRows when there is none.
func firstChangeFrom(ctx context.Context, tx *sql.Tx, rev int64) (found, at int64, err error) {
	err = tx.QueryRowContext(ctx, `SELECT rev, created_at FROM changes WHERE rev >= ? ORDER BY rev LIMIT 1`, rev).Scan(&found, &at)
	return found, at, err
}
