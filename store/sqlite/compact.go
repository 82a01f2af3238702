package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/leaselab/leaselab/store"
)

// compactBatch is how many change rows one compaction transaction walks; it deletes at most
// twice as many, so that writers never wait long for the write connection.
const compactBatch = 1000

func (db *DB) compactLoop() {
	t := time.NewTicker(db.opts.CompactInterval)
	defer t.Stop()
	for {
		select {
		case <-db.ctx.Done():
			return
		case <-t.C:
		}
		if _, err := db.Compact(db.ctx); err != nil && db.ctx.Err() == nil {
			db.logger.Error("compaction failed", slog.Any(logKeyError, err))
		}
	}
}

// Compact runs one compaction pass now and returns how many change rows it deleted.
//
// The target revision C is the highest revision that is either more than CompactKeep
// revisions behind the current one or older than CompactMaxAge. At or below C the log keeps
// only the latest change of every key that still exists at C: superseded changes and the
// changes of keys deleted at or before C go. Lists at any revision >= C stay exact and every
// change above C still finds its previous state. C is recorded before any row is deleted, so a
// reader that misses a row always sees a compacted revision that explains it.
//
// Compact returns store.ErrClosed after Close, the context's error, or an error of the database.
func (db *DB) Compact(ctx context.Context) (compacted int64, err error) {
	if db.closed.Load() {
		return 0, store.ErrClosed
	}
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	start := time.Now()

	target, prev, cursor, err := db.compactTarget(ctx)
	if err != nil {
		return 0, err
	}
	if target > prev {
		if err := db.setMeta(ctx, "compacted", target); err != nil {
			return 0, fmt.Errorf("record compacted revision: %w", err)
		}
	}
	target = max(target, prev)
	// cursor trails target when an earlier pass was interrupted; resume from it.
	for cursor < target {
		if db.closed.Load() {
			return compacted, store.ErrClosed
		}
		n, next, err := db.compactStep(ctx, cursor, target)
		compacted += n
		if err != nil {
			return compacted, err
		}
		cursor = next
	}
	if compacted > 0 || target > prev {
		db.logger.Info("compacted", slog.Int64(logKeyCompacted, target), slog.Int64(logKeyDeleted, compacted),
			slog.Duration(logKeyDuration, time.Since(start)))
	}
	return compacted, nil
}

// compactTarget returns the revision to compact to (which may be below prev: nothing to do),
// the compacted revision so far and how far the deletes have got.
func (db *DB) compactTarget(ctx context.Context) (target, prev, cursor int64, err error) {
	tx, err := db.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, 0, 0, db.readErr("begin compact", err)
	}
	defer func() { _ = tx.Rollback() }()
	current, prev, err := readRevisions(ctx, tx)
	if err != nil {
		return 0, 0, 0, db.readErr("compact revision", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'compact_cursor'`).Scan(&cursor); err != nil {
		return 0, 0, 0, db.readErr("compact cursor", err)
	}
	target = current - db.opts.CompactKeep
	// By age: every change up to the first one younger than the cut-off. Walking the rowid from
	// the compacted revision stops at that change; with a clock that went backwards this errs
	// on keeping too much.
	cutoff := db.opts.Now().Add(-db.opts.CompactMaxAge).UnixNano()
	var young int64
	err = tx.QueryRowContext(ctx, `SELECT rev FROM changes WHERE rev > ? AND created_at >= ? ORDER BY rev LIMIT 1`,
		prev, cutoff).Scan(&young)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		target = current // every change is old
	case err != nil:
		return 0, 0, 0, db.readErr("compact age", err)
	default:
		target = max(target, young-1)
	}
	return target, prev, cursor, nil
}

func (db *DB) setMeta(ctx context.Context, key string, value int64) error {
	tx, err := db.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = ?`, value, key); err != nil {
		return fmt.Errorf("update meta: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// compactStep compacts the changes in (cursor, hi], hi being at most compactBatch rows past
// cursor and at most target, in one transaction. A change in that range makes its previous row
// superseded (a row is the previous row of at most one change, and every row above target
// keeps its previous one, which is the key's latest at or below target and not a delete); a
// delete in that range goes itself. It returns the rows deleted and hi.
func (db *DB) compactStep(ctx context.Context, cursor, target int64) (deleted, hi int64, err error) {
	tx, err := db.wdb.BeginTx(ctx, nil)
	if err != nil {
		return 0, cursor, fmt.Errorf("begin compact: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	err = tx.QueryRowContext(ctx, `SELECT rev FROM changes WHERE rev > ? AND rev <= ? ORDER BY rev LIMIT 1 OFFSET ?`,
		cursor, target, compactBatch-1).Scan(&hi)
	if errors.Is(err, sql.ErrNoRows) {
		hi = target
	} else if err != nil {
		return 0, cursor, fmt.Errorf("compact range: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM changes WHERE rev IN
		(SELECT prev_rev FROM changes WHERE rev > ? AND rev <= ? AND prev_rev > 0)`, cursor, hi)
	if err != nil {
		return 0, cursor, fmt.Errorf("delete superseded: %w", err)
	}
	superseded, _ := res.RowsAffected()
	res, err = tx.ExecContext(ctx, `DELETE FROM changes WHERE rev > ? AND rev <= ? AND type = ?`, cursor, hi, int(store.Deleted))
	if err != nil {
		return 0, cursor, fmt.Errorf("delete deletes: %w", err)
	}
	deletes, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'compact_cursor'`, hi); err != nil {
		return 0, cursor, fmt.Errorf("update compact cursor: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, cursor, fmt.Errorf("commit compact: %w", err)
	}
	return superseded + deletes, hi, nil
}
