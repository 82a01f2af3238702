package sqlite

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The revision record, path+".revision", is what makes a lost -wal file or an older copy of the
// database visible at start. SQLite alone cannot tell: after a crash, a database whose -wal was
// deleted opens as it was at its last checkpoint and would hand out again revisions that clients
// already saw. The record holds two revisions:
//
//   - acknowledged: every revision a caller was told about is at or below it. The acknowledger
//     (ack.go) makes it durable (written and fdatasync'ed) after each commit and before anyone
//     is answered or an event published, so it never lags what was acknowledged, whatever the
//     crash timing.
//   - reserved: no revision above it was ever committed. The writer raises it, durably, before
//     a commit would pass it, reserveAhead at a time; Close lowers it to the last revision.
//
// Open compares the database with the record. Below acknowledged, acknowledged writes are gone:
// Open refuses, or with AcceptRollback continues after reserved. Equal to acknowledged after a
// crash (reserved above acknowledged), a commit may have become visible to readers without
// being acknowledged and then have been lost with the -wal: revisions continue after reserved,
// so that none is handed out twice. A gap in revisions costs nothing; a reused one breaks
// every client that saw it.
//
// The file is two fixed-size slots written in turn, each a text line with a sequence number and
// a checksum: a write torn by a power cut leaves the other slot, one commit older, readable.

// ErrRolledBack is returned by Open when the database is behind the revision it acknowledged.
var ErrRolledBack = errors.New("database rolled back")

// reserveAhead is how far past a commit's last revision a raise of the reserved revision goes:
// one extra fdatasync per reserveAhead revisions. It must exceed maxBatch, so that one raise
// always covers a whole batch.
const reserveAhead = 4 * maxBatch

// legacyMargin is how far past the revision in a record of the older format (one number,
// written about once a second) revisions may have been handed out.
const legacyMargin = 10_000

const (
	slotSize   = 128
	recordHead = "leaselab-revision-record"
)

// revisionRecord is the content of one slot.
type revisionRecord struct {
	seq, acked, reserved int64
}

func (r revisionRecord) clean() bool { return r.reserved <= r.acked }

func ackedPath(path string) string { return path + ".revision" }

// encode formats r as one slot: a line padded with spaces to slotSize.
func (r revisionRecord) encode() []byte {
	body := fmt.Sprintf("%s seq=%d acknowledged=%d reserved=%d", recordHead, r.seq, r.acked, r.reserved)
	line := fmt.Sprintf("%s crc=%08x", body, crc32.ChecksumIEEE([]byte(body)))
	b := []byte(line + strings.Repeat(" ", slotSize-1-len(line)) + "\n")
	return b
}

// decodeSlot parses one slot; false when it is empty, torn or not a record.
func decodeSlot(b []byte) (revisionRecord, bool) {
	line := strings.TrimRight(string(b), " \n\x00")
	body, sum, ok := strings.Cut(line, " crc=")
	if !ok || fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(body))) != sum {
		return revisionRecord{}, false
	}
	var r revisionRecord
	if n, err := fmt.Sscanf(body, recordHead+" seq=%d acknowledged=%d reserved=%d", &r.seq, &r.acked, &r.reserved); n != 3 || err != nil {
		return revisionRecord{}, false
	}
	return r, true
}

// readRecord returns the newest readable slot of the record; found is false when there is no
// record. A record of the older format, one revision written about once a second, reads as
// acknowledged at that revision with legacyMargin reserved beyond it.
func readRecord(path string) (rec revisionRecord, found bool, err error) {
	b, err := os.ReadFile(ackedPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return revisionRecord{}, false, nil
	}
	if err != nil {
		return revisionRecord{}, false, err
	}
	if rev, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
		return revisionRecord{acked: rev, reserved: rev + legacyMargin}, true, nil
	}
	ok := false
	for off := 0; off+slotSize <= len(b); off += slotSize {
		if r, valid := decodeSlot(b[off : off+slotSize]); valid && (!ok || r.seq > rec.seq) {
			rec, ok = r, true
		}
	}
	if !ok {
		return revisionRecord{}, false, fmt.Errorf("%s is not a revision record leaselab can read: restore it from a backup, or remove it to start without the check", ackedPath(path))
	}
	return rec, true, nil
}

// recorder writes the record: the writer goroutine raises the reservation, the acknowledger
// (ack.go) the acknowledged revision.
type recorder struct {
	mu  sync.Mutex
	f   *os.File
	rec revisionRecord
	// reserved mirrors rec.reserved, so that the writer's check before each commit does not
	// wait for the lock the acknowledger holds through its fdatasync.
	reserved atomic.Int64
}

// createRecord writes a new record file holding rec in both slots (synced, renamed into place,
// the directory synced) and opens it for the writes that follow.
func createRecord(path string, rec revisionRecord) (*recorder, error) {
	tmp := ackedPath(path) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	rec.seq++
	slot := rec.encode()
	_, werr := f.Write(append(slot, slot...))
	if err := errors.Join(werr, f.Sync()); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, ackedPath(path)); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := syncDir(path); err != nil {
		f.Close()
		return nil, err
	}
	r := &recorder{f: f, rec: rec}
	r.reserved.Store(rec.reserved)
	return r, nil
}

// write makes a record of acked and reserved durable in the slot after the current one.
func (r *recorder) write(acked, reserved int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writeLocked(acked, reserved)
}

func (r *recorder) writeLocked(acked, reserved int64) error {
	next := revisionRecord{seq: r.rec.seq + 1, acked: acked, reserved: reserved}
	if _, err := r.f.WriteAt(next.encode(), (next.seq%2)*slotSize); err != nil {
		return err
	}
	if err := fdatasync(r.f); err != nil {
		return err
	}
	r.rec = next
	r.reserved.Store(next.reserved)
	return nil
}

// raise makes sure that the reserved revision covers last.
func (r *recorder) raise(last int64) error {
	if last <= r.reserved.Load() {
		return nil // nearly always: one raise covers reserveAhead revisions
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if last <= r.rec.reserved {
		return nil
	}
	return r.writeLocked(r.rec.acked, last+reserveAhead)
}

// ack records last as acknowledged.
func (r *recorder) ack(last int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writeLocked(last, max(r.rec.reserved, last))
}

// current returns the last record written.
func (r *recorder) current() revisionRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec
}

func (r *recorder) close() error {
	if r == nil {
		return nil
	}
	return r.f.Close()
}

// startRevision compares the database's revision with the record and returns the revision
// that new writes continue after, with the record it writes for it. See the comment at the top.
func (db *DB) startRevision(ctx context.Context, current int64) (int64, error) {
	rec, found, err := readRecord(db.path)
	if err != nil {
		return current, fmt.Errorf("read the acknowledged revision: %w", err)
	}
	switch {
	case !found || current > rec.acked || (current == rec.acked && rec.clean()):
		return current, nil
	case current == rec.acked:
		db.logger.Info("store was not closed cleanly: revisions continue after every one that may have been seen",
			slog.String(logKeyPath, db.path), slog.Int64(logKeyRevision, current), slog.Int64("next", rec.reserved+1))
		return rec.reserved, db.moveRevision(ctx, rec.reserved)
	case !db.opts.AcceptRollback:
		return current, fmt.Errorf("%w: database %s is at revision %d but revision %d was acknowledged to clients: "+
			"its write-ahead log %s-wal was probably deleted or lost after a crash, or an older copy was put in its place; "+
			"restore the missing file or a backup, or start with --accept-rollback to accept the loss knowingly (clients that saw newer revisions must relist)",
			ErrRolledBack, db.path, current, rec.acked, db.path)
	}
	next := max(rec.reserved, rec.acked)
	if err := db.moveRevision(ctx, next); err != nil {
		return current, err
	}
	db.logger.Warn("database rolled back: accepted; new writes continue past every revision handed out before",
		slog.String(logKeyPath, db.path), slog.Int64(logKeyRevision, current), slog.Int64("acknowledged", rec.acked), slog.Int64("next", next+1))
	return next, nil
}

// moveRevision makes rev the current revision, so that the next write gets rev+1.
// sqlite_sequence has no key on name: the row is replaced, never added beside the old one.
func (db *DB) moveRevision(ctx context.Context, rev int64) error {
	tx, err := db.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("move the revision to %d: %w", rev, err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `DELETE FROM sqlite_sequence WHERE name = 'changes'`); err != nil {
		return fmt.Errorf("move the revision to %d: %w", rev, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq) VALUES ('changes', ?)`, rev); err != nil {
		return fmt.Errorf("move the revision to %d: %w", rev, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("move the revision to %d: %w", rev, err)
	}
	return nil
}

// reserve makes sure that the record's reserved revision covers last before a commit makes
// last visible.
func (db *DB) reserve(last int64) error {
	if err := db.rec.raise(last); err != nil {
		return fmt.Errorf("reserve revisions in %s: %w", ackedPath(db.path), err)
	}
	return nil
}

// acknowledge records last as acknowledged; the acknowledger calls it after a commit and before
// anyone is told of it.
func (db *DB) acknowledge(last int64) error {
	if err := db.rec.ack(last); err != nil {
		return fmt.Errorf("record the acknowledged revision in %s: %w", ackedPath(db.path), err)
	}
	return nil
}

// recordClean lowers the reserved revision to the database's own at Close, once the writer
// has stopped: a record whose reserved revision is its acknowledged one says that the store
// was closed cleanly, and the next start continues right after it.
func (db *DB) recordClean() {
	var current int64
	if err := db.wdb.QueryRow(sqlSeq).Scan(&current); err != nil || current < db.rec.current().acked {
		return
	}
	if err := db.rec.write(current, current); err != nil {
		db.logger.Warn("could not record the revision at close; the next start continues after the reserved revisions",
			slog.String(logKeyPath, ackedPath(db.path)), slog.Any(logKeyError, err))
	}
}
