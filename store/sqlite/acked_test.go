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
)

// TestLostWALIsRefused: after a kill -9, a database whose -wal file is deleted opens as it was
// at its last checkpoint. Open refuses it, naming the file; with AcceptRollback it opens and
// new writes get revisions above every one acknowledged before.
func TestLostWALIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lost.db")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), crashEnv+"="+path, crashNoCheckpointEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timeout := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer timeout.Stop()
	// Read acknowledgements until the record beside the database has caught up with some.
	var highest int64
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		var key string
		var rev int64
		if _, err := fmt.Sscanf(lines.Text(), "ack %s %d", &key, &rev); err == nil {
			highest = max(highest, rev)
		}
		if rec, _ := readAcked(path); rec >= 100 {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for lines.Scan() {
		var key string
		var rev int64
		if _, err := fmt.Sscanf(lines.Text(), "ack %s %d", &key, &rev); err == nil {
			highest = max(highest, rev)
		}
	}
	if rec, _ := readAcked(path); rec < 100 {
		t.Fatalf("the record beside the database says %d", rec)
	}
	if err := os.Remove(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + "-shm")

	_, err = Open(context.Background(), path, testOptions(), testLogger(t))
	if !errors.Is(err, ErrRolledBack) || !strings.Contains(err.Error(), path+"-wal") {
		t.Fatalf("open after the -wal was deleted: %v; want ErrRolledBack naming the -wal file", err)
	}

	opts := testOptions()
	opts.AcceptRollback = true
	db := MustOpenPath(t, path, opts)
	rec, _ := readAcked(path)
	obj := MustCreate(t, db, leaseKey("crash", "after"), "{}")
	if obj.Revision <= highest {
		t.Errorf("a write after the accepted rollback got revision %d, not above the acknowledged %d", obj.Revision, highest)
	}
	t.Logf("acknowledged up to %d before the kill, recorded %d; first write after: %d", highest, rec, obj.Revision)
}
