//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockWait is how long Open waits for the lock before refusing: a lock can outlive its
// holder's Close for a moment, as a process forked in that moment (to exec another program)
// holds a copy of the descriptor until its exec closes it; and a restarted server may start
// while the one it replaces is still exiting.
const lockWait = 2 * time.Second

// lockFile takes an exclusive advisory lock on the database file for as long as the store is
// open, so that a second server on the same file is refused rather than writing beside the
// first, whose watches would never see its writes. The kernel drops the lock with the process,
// also on kill -9. It is flock, not the record locks SQLite takes; the descriptor is closed only
// after SQLite has closed the file, since closing any descriptor of a file drops the process's
// record locks on it.
func lockFile(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockWait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is already open in another process (another leaselab serve?)", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// syncDir makes a rename in the database's directory durable.
func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
