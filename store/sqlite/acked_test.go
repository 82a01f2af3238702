package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
)

// crashRun is a child process writing to a database until it is killed (crashChild), and the
// writes it acknowledged.
type crashRun struct {
	t     *testing.T
	path  string
	cmd   *exec.Cmd
	lines *bufio.Scanner
	acked map[string]int64
	// highest is the highest revision the child acknowledged.
	highest int64
}

func startCrashChild(t *testing.T, path string, env ...string) *crashRun {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), crashEnv+"="+path), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timeout := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	t.Cleanup(func() { timeout.Stop() })
	return &crashRun{t: t, path: path, cmd: cmd, lines: bufio.NewScanner(out), acked: map[string]int64{}}
}

// next reads one acknowledgement; false when the child's output ended.
func (r *crashRun) next() bool {
	for r.lines.Scan() {
		var key string
		var rev int64
		if _, err := fmt.Sscanf(r.lines.Text(), "ack %s %d", &key, &rev); err == nil {
			r.acked[key] = rev
			r.highest = max(r.highest, rev)
			return true
		}
	}
	return false
}

// kill kills the child with SIGKILL and reads the acknowledgements it printed before dying.
func (r *crashRun) kill() {
	if err := r.cmd.Process.Kill(); err != nil {
		r.t.Fatal(err)
	}
	for r.next() {
	}
	_ = r.cmd.Wait()
}

// mainFile returns what changes in the database file when a checkpoint writes to it.
func mainFile(t *testing.T, path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
}

// killAfterCheckpoint runs a child with frequent checkpoints and 4 writers, waits until the
// database file changed under a checkpoint and after more acknowledgements, kills the child,
// and deletes the -wal and -shm files.
func killAfterCheckpoint(t *testing.T, path string, more int) *crashRun {
	t.Helper()
	r := startCrashChild(t, path, crashCheckpointEnv+"=64", crashWritersEnv+"=4")
	for r.next() && len(r.acked) < 50 {
	}
	before := mainFile(t, path)
	for r.next() && mainFile(t, path) == before {
	}
	for i := 0; i < more && r.next(); i++ {
	}
	r.kill()
	if len(r.acked) < 50 {
		t.Fatalf("the child acknowledged only %d writes", len(r.acked))
	}
	loseWAL(t, path)
	return r
}

// loseWAL deletes the database's -wal and -shm files, as after a careless clean-up.
func loseWAL(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + "-shm")
}

// lost returns the acknowledged writes that db does not have.
func (r *crashRun) lost(db *DB) []string {
	var lost []string
	for key, rev := range r.acked {
		got, err := db.Get(context.Background(), leaseKey("crash", key))
		if err != nil || got.Revision != rev {
			lost = append(lost, key)
		}
	}
	return lost
}

// TestLostWALIsNeverSilent: kill -9 right after a checkpoint (and a few writes later), the
// -wal file deleted. Whatever the timing, Open either refuses, naming the -wal file, or has every
// acknowledged write. It refuses with ErrRolledBack when the database is whole but behind, or
// with store.ErrDamaged when the kill stopped a checkpoint half way through the file.
func TestLostWALIsNeverSilent(t *testing.T) {
	t.Parallel()
	refused := 0
	for i, more := range []int{0, 0, 1, 3, 10, 40} {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("lost%d.db", i))
		r := killAfterCheckpoint(t, path, more)
		db, err := Open(context.Background(), path, testOptions(), testLogger(t))
		if err != nil {
			if !(errors.Is(err, ErrRolledBack) || errors.Is(err, store.ErrDamaged)) || !strings.Contains(err.Error(), path+"-wal") {
				t.Fatalf("run %d: open after the -wal was deleted: %v; want ErrRolledBack or ErrDamaged naming the -wal file", i, err)
			}
			refused++
			continue
		}
		if lost := r.lost(db); len(lost) > 0 {
			t.Errorf("run %d: opened without a word, and %d of %d acknowledged writes are gone (%v...)", i, len(lost), len(r.acked), lost[0])
		}
		db.Close()
	}
	t.Logf("%d of 6 starts refused", refused)
}

// TestAcceptedRollbackNeverReusesRevisions: with AcceptRollback, a database that lost its -wal
// opens, and new writes get revisions above every one acknowledged before.
func TestAcceptedRollbackNeverReusesRevisions(t *testing.T) {
	t.Parallel()
	for i, more := range []int{0, 5, 40} {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("accept%d.db", i))
		r := killAfterCheckpoint(t, path, more)
		opts := testOptions()
		opts.AcceptRollback = true
		db := MustOpenPath(t, path, opts)
		for j := range 3 {
			obj := MustCreate(t, db, leaseKey("crash", fmt.Sprintf("after-%d", j)), "{}")
			if obj.Revision <= r.highest {
				t.Fatalf("run %d: a write after the accepted rollback got revision %d, acknowledged before up to %d", i, obj.Revision, r.highest)
			}
		}
		// Accepted once, the rollback is not refused again at the next start.
		db.Close()
		MustOpenPath(t, path, testOptions()).Close()
	}
}

// TestLostWALWithoutCheckpointIsRefused: everything since the start in the -wal file, which is
// deleted after a kill -9: the database is empty, and Open refuses.
func TestLostWALWithoutCheckpointIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lost.db")
	r := startCrashChild(t, path, crashNoCheckpointEnv+"=1")
	for r.next() && len(r.acked) < 100 {
	}
	r.kill()
	rec, _, err := readRecord(path)
	if err != nil || rec.acked < r.highest {
		t.Fatalf("the record says %d (%v), the child acknowledged up to %d", rec.acked, err, r.highest)
	}
	loseWAL(t, path)
	if _, err := Open(context.Background(), path, testOptions(), testLogger(t)); !errors.Is(err, ErrRolledBack) {
		t.Fatalf("open after the -wal was deleted: %v; want ErrRolledBack", err)
	}
}

// TestHalfCheckpointNamesTheLostWAL: a database left half copied (as by a kill -9 during a
// checkpoint) by a store that was not closed cleanly, its -wal gone, is refused as damaged,
// and the error names the missing -wal file as the cause; damage after a clean close does not.
func TestHalfCheckpointNamesTheLostWAL(t *testing.T) {
	t.Parallel()
	for _, clean := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "half.db")
		db := MustOpenPath(t, path, testOptions())
		fillDB(t, db, 400)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if !clean {
			// What a running store's record says between commits: revisions reserved ahead.
			rec, _, err := readRecord(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := createRecord(path, revisionRecord{acked: rec.acked, reserved: rec.acked + reserveAhead})
			if err != nil {
				t.Fatal(err)
			}
			r.close()
		}
		scribble(t, path, 20<<10)
		os.Remove(path + "-wal")
		_, err := Open(context.Background(), path, testOptions(), testLogger(t))
		if !errors.Is(err, store.ErrDamaged) {
			t.Fatalf("clean %v: open: %v; want ErrDamaged", clean, err)
		}
		if names := strings.Contains(err.Error(), path+"-wal"); names == clean {
			t.Errorf("clean %v: error %q names the -wal file: %v, want %v", clean, err, names, !clean)
		}
	}
}

// TestCrashKeepsRevisionsUnique: after a kill -9 with the -wal intact, nothing is lost and
// new revisions continue above every acknowledged one; after a clean Close they continue
// right after the last.
func TestCrashKeepsRevisionsUnique(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "unique.db")
	r := startCrashChild(t, path, crashWritersEnv+"=4")
	for r.next() && len(r.acked) < 200 {
	}
	r.kill()
	db := MustOpenPath(t, path, testOptions())
	if lost := r.lost(db); len(lost) > 0 {
		t.Fatalf("%d acknowledged writes lost with the -wal intact", len(lost))
	}
	obj := MustCreate(t, db, leaseKey("crash", "after"), "{}")
	if obj.Revision <= r.highest {
		t.Fatalf("first write after the crash got revision %d, acknowledged before up to %d", obj.Revision, r.highest)
	}
	db.Close()
	db = MustOpenPath(t, path, testOptions())
	if next := MustCreate(t, db, leaseKey("crash", "after-close"), "{}"); next.Revision != obj.Revision+1 {
		t.Fatalf("after a clean close the next revision is %d, want %d", next.Revision, obj.Revision+1)
	}
}

// TestOlderCopyIsRefused: a copy of the database taken earlier, put in place of the file after
// a clean Close, is refused.
func TestOlderCopyIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "copy.db")
	db := MustOpenPath(t, path, testOptions())
	MustCreate(t, db, leaseKey("copy", "a"), "{}")
	db.Close()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db = MustOpenPath(t, path, testOptions())
	MustCreate(t, db, leaseKey("copy", "b"), "{}")
	db.Close()
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), path, testOptions(), testLogger(t)); !errors.Is(err, ErrRolledBack) {
		t.Fatalf("open of an older copy: %v; want ErrRolledBack", err)
	}
}

// TestRecordSurvivesATornSlot: a slot torn by a power cut is skipped for the other, one
// write older; a record of the older one-number format still reads.
func TestRecordSurvivesATornSlot(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "torn.db")
	rec, err := createRecord(path, revisionRecord{acked: 10, reserved: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.write(20, 1044); err != nil {
		t.Fatal(err)
	}
	if err := rec.write(30, 1044); err != nil {
		t.Fatal(err)
	}
	got, _, err := readRecord(path)
	if err != nil || got.acked != 30 || got.reserved != 1044 {
		t.Fatalf("record %+v, %v; want acknowledged 30, reserved 1044", got, err)
	}
	// Tear the newest slot half-way.
	if _, err := rec.f.WriteAt([]byte(strings.Repeat("\x00", slotSize/2)), (rec.rec.seq%2)*slotSize+slotSize/2); err != nil {
		t.Fatal(err)
	}
	rec.close()
	if got, _, err := readRecord(path); err != nil || got.acked != 20 {
		t.Fatalf("record with a torn slot %+v, %v; want the older slot, acknowledged 20", got, err)
	}

	if err := os.WriteFile(ackedPath(path), []byte("301\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _, err := readRecord(path); err != nil || got.acked != 301 || got.reserved < 301+legacyMargin {
		t.Fatalf("older record %+v, %v; want acknowledged 301 and a margin reserved", got, err)
	}
	if err := os.WriteFile(ackedPath(path), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readRecord(path); err == nil || !strings.Contains(err.Error(), ackedPath(path)) {
		t.Fatalf("unreadable record: %v; want an error naming the file", err)
	}
}
