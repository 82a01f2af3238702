package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// The highest revision the store ever acknowledged is recorded beside the database, in
// path+".revision", about once a second while writes come in and at Close. SQLite alone cannot
// tell that its -wal file was deleted after a crash: the database silently opens as it was at
// the last checkpoint, hundreds of revisions back, and then hands those revisions out again,
// which breaks every client that saw them. With the record, Open notices and refuses.

// ErrRolledBack is returned by Open when the database is behind the revision it acknowledged.
var ErrRolledBack = errors.New("database rolled back")

// ackedEvery is how often the record is brought up to date while writes come in.
const ackedEvery = time.Second

// rollbackMargin is how far past the recorded revision an accepted rollback moves the revision
// counter: revisions acknowledged in the last ackedEvery before a crash are not in the record,
// and must not be handed out again either (a few thousand a second at most; revisions only
// need to increase, so a gap costs nothing).
const rollbackMargin = 10_000

func ackedPath(path string) string { return path + ".revision" }

// readAcked returns the recorded revision, 0 when there is no record.
func readAcked(path string) (int64, error) {
	b, err := os.ReadFile(ackedPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	rev, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", ackedPath(path), err)
	}
	return rev, nil
}

// writeAcked records rev durably: a new file, synced, renamed over the old one.
func writeAcked(path string, rev int64) error {
	tmp := ackedPath(path) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(strconv.FormatInt(rev, 10) + "\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, ackedPath(path))
}

// checkRollback compares the database's revision with the recorded one. Behind it, Open fails
// unless opts.AcceptRollback; then the revision counter moves rollbackMargin past the recorded
// revision, so that no resourceVersion is handed out twice.
func (db *DB) checkRollback(ctx context.Context, current int64) (int64, error) {
	acked, err := readAcked(db.path)
	if err != nil {
		return current, fmt.Errorf("read the acknowledged revision: %w", err)
	}
	if current >= acked {
		return current, nil
	}
	if !db.opts.AcceptRollback {
		return current, fmt.Errorf("%w: database %s is at revision %d but revision %d was acknowledged to clients: "+
			"its write-ahead log %s-wal was probably deleted or lost after a crash, or an older copy was put in its place; "+
			"restore the missing file or a backup, or accept the rollback knowingly (clients that saw newer revisions must relist)",
			ErrRolledBack, db.path, current, acked, db.path)
	}
	next := acked + rollbackMargin
	if _, err := db.wdb.ExecContext(ctx, `INSERT OR REPLACE INTO sqlite_sequence (name, seq) VALUES ('changes', ?)`, next); err != nil {
		return current, fmt.Errorf("move the revision past %d: %w", acked, err)
	}
	db.logger.Warn("database rolled back: accepted; new writes continue past every revision acknowledged before",
		slog.String(logKeyPath, db.path), slog.Int64(logKeyRevision, current), slog.Int64("acknowledged", acked), slog.Int64("next", next+1))
	return next, nil
}

// keepAcked brings the record up to date every ackedEvery while the revision advances, until
// the store closes.
func (db *DB) keepAcked() {
	t := time.NewTicker(ackedEvery)
	defer t.Stop()
	for {
		select {
		case <-db.ctx.Done():
			return
		case <-t.C:
			db.recordAcked()
		}
	}
}

// recordAcked writes the acknowledged revision when it moved since the last record.
func (db *DB) recordAcked() {
	rev := db.acked.Load()
	if rev <= db.recorded.Load() {
		return
	}
	if err := writeAcked(db.path, rev); err != nil {
		db.logger.Warn("could not record the acknowledged revision", slog.String(logKeyPath, ackedPath(db.path)), slog.Any(logKeyError, err))
		return
	}
	db.recorded.Store(rev)
}
