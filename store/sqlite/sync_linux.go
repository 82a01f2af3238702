package sqlite

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data, and its size only when that changed: the revision record is
// rewritten in place after every commit, so its metadata never needs the journal.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
