//go:build !linux

package sqlite

import "os"

// fdatasync is a full sync where the system offers no data-only one.
func fdatasync(f *os.File) error { return f.Sync() }
