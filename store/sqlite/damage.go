package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/leaselab/leaselab/store"
)

// damageHint says what to do about a damaged database.
const damageHint = "restore it from a copy made with `leaselab backup`, or move it aside to start with an empty database"

// isDamage reports whether err says the database file is damaged: a corrupt page or not a
// database at all.
func isDamage(err error) bool {
	switch sqliteCode(err) & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// noteDamage records and logs, once, that err found the database damaged, and returns err
// wrapped in store.ErrDamaged; other errors are returned unchanged.
func (db *DB) noteDamage(err error) error {
	if err == nil || !isDamage(err) {
		return err
	}
	d := fmt.Errorf("%w: database %s: %w", store.ErrDamaged, db.path, err)
	if db.damage.CompareAndSwap(nil, &d) {
		db.logger.Error("database damaged: writes are refused from now on; "+damageHint, slog.String(logKeyPath, db.path), slog.Any(logKeyError, err))
		// Whatever they would deliver next comes from a file that cannot be trusted: their
		// clients get an ERROR event instead of silence.
		db.hub.endAll(d, false)
	}
	return d
}

// Damaged returns why the database is damaged, once a read or write found it so; nil until
// then. It implements store.DamageReporter.
func (db *DB) Damaged() error {
	if d := db.damage.Load(); d != nil {
		return *d
	}
	return nil
}

var _ store.DamageReporter = (*DB)(nil)

// checkIntegrity runs SQLite's quick_check, which reads every page: a damaged file is refused
// at start with what to do, instead of being served as healthy.
func (db *DB) checkIntegrity(ctx context.Context) error {
	rows, err := db.wdb.QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		return db.damagedAtStart(err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return db.damagedAtStart(err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return db.damagedAtStart(err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: database %s is damaged (%s): %s", store.ErrDamaged, db.path, strings.Join(problems, "; "), db.startHint())
	}
	return nil
}

// damagedAtStart words an error met while checking the file at start.
func (db *DB) damagedAtStart(err error) error {
	if isDamage(err) {
		return fmt.Errorf("%w: database %s is damaged (%v): %s", store.ErrDamaged, db.path, err, db.startHint())
	}
	return fmt.Errorf("check database %s: %w", db.path, err)
}

// startHint says what to do about damage found at start. A -wal file lost in the middle of a
// checkpoint leaves the database half copied: the missing file is the cause to name.
func (db *DB) startHint() string {
	if db.walLost {
		return fmt.Sprintf("its write-ahead log %s-wal is missing after the store was not closed cleanly (deleted or lost after a crash, probably during a checkpoint): restore the missing file or a copy made with `leaselab backup`", db.path)
	}
	return damageHint
}

// walLost reports whether the revision record says the store at path was not closed cleanly
// while its -wal file is gone. Checked before SQLite opens the file, which creates a new one.
func walLost(path string) bool {
	rec, found, err := readRecord(path)
	if err != nil || !found || rec.clean() {
		return false
	}
	_, err = os.Stat(path + "-wal")
	return errors.Is(err, fs.ErrNotExist)
}
