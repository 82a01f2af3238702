//go:build !unix

package sqlite

import "os"

// lockFile does nothing where flock is missing: two servers on one file go unnoticed there.
func lockFile(string) (*os.File, error) { return nil, nil }

// syncDir does nothing where a directory cannot be opened to be synced.
func syncDir(string) error { return nil }
