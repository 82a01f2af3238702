//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

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
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is already open in another process (another leaselab serve?)", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
