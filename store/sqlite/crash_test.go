package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

const (
	crashEnv             = "LEASELAB_CRASH_DB"
	crashNoCheckpointEnv = "LEASELAB_CRASH_NO_CHECKPOINT"
	// crashCheckpointEnv sets the child's wal_autocheckpoint (pages), so that checkpoints
	// come every few dozen writes.
	crashCheckpointEnv = "LEASELAB_CRASH_CHECKPOINT_PAGES"
	crashWritersEnv    = "LEASELAB_CRASH_WRITERS"
)

// TestCrashKeepsAcknowledgedWrites runs writers in a child process, kills it with SIGKILL while
// they write, and checks that every write the child saw acknowledged is in the reopened store.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]int64{}
	lines := bufio.NewScanner(out)
	timeout := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer timeout.Stop()
	for lines.Scan() {
		var key string
		var rev int64
		if _, err := fmt.Sscanf(lines.Text(), "ack %s %d", &key, &rev); err != nil {
			continue
		}
		acked[key] = rev
		if len(acked) == 300 {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(acked) < 300 {
		t.Fatalf("the child acknowledged only %d writes", len(acked))
	}

	db := MustOpenPath(t, path, testOptions())
	for key, rev := range acked {
		if got := MustGet(t, db, leaseKey("crash", key)); got.Revision != rev {
			t.Fatalf("%s: revision %d, acknowledged %d", key, got.Revision, rev)
		}
	}
	var check string
	if err := db.rdb.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity check: %q %v", check, err)
	}
}

// TestMain runs the crash test's child when the test binary is started as one: it writes
// until it is killed.
func TestMain(m *testing.M) {
	if path := os.Getenv(crashEnv); path != "" {
		crashChild(path)
		return
	}
	os.Exit(m.Run())
}

// crashChild creates objects from 8 goroutines and prints every acknowledged one, until killed.
func crashChild(path string) {
	db, err := Open(context.Background(), path, testOptions(), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pages := os.Getenv(crashCheckpointEnv)
	if os.Getenv(crashNoCheckpointEnv) != "" {
		// Everything stays in the -wal file, as between two checkpoints.
		pages = "0"
	}
	if pages != "" {
		if _, err := db.wdb.Exec("PRAGMA wal_autocheckpoint=" + pages); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	writers := 8
	if n, err := strconv.Atoi(os.Getenv(crashWritersEnv)); err == nil {
		writers = n
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("g%d-%d", g, i)
				obj, err := db.Create(context.Background(), leaseKey("crash", key), []byte(key))
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Printf("ack %s %d\n", key, obj.Revision)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
