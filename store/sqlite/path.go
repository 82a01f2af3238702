package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// checkPath says in plain words why the database at path cannot be used, before SQLite says
// "unable to open database file (14)": a directory, a file that cannot be written, or a
// directory in which the -wal and -shm files cannot be created.
func checkPath(path string) error {
	dir := filepath.Dir(path)
	if di, err := os.Stat(dir); err != nil {
		return fmt.Errorf("the directory of database %s: %w", path, err)
	} else if !di.IsDir() {
		return fmt.Errorf("database %s: %s is not a directory", path, dir)
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("database %s is a directory: give the path of a file (it is created when missing)", path)
	case err == nil:
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("database %s cannot be written (%w): leaselab writes to it; make it writable or use another file", path, err)
		}
		f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("database %s: %w", path, err)
	}
	probe, err := os.CreateTemp(dir, ".leaselab-probe-*")
	if err != nil {
		return fmt.Errorf("the directory %s cannot be written (%w): SQLite keeps %s-wal and %s-shm beside the database, so it needs a writable directory", dir, err, filepath.Base(path), filepath.Base(path))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}
