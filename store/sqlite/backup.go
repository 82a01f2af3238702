package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// openFile opens an existing database file for a one-off task (backup, export) from another
// process than the server, which may be running: WAL mode lets it read a consistent snapshot
// while the server writes. It does not run migrations and fails when the file does not exist.
func openFile(ctx context.Context, path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath(), RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return db, nil
}

// Backup writes a consistent copy of the database at path to dst with VACUUM INTO: the copy is
// the database as of one read transaction, so it holds every write committed before the
// backup began, and nothing half-written. It may run while a server uses the database. The
// copy is written beside dst and renamed into place, so dst is either absent or complete, and
// readable by its owner only. It fails when dst exists.
func Backup(ctx context.Context, path, dst string) error {
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("%s already exists", dst)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	db, err := openFile(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".partial")
	os.Remove(tmp)
	// The copy holds workshop tokens: VACUUM INTO fills an empty file created 0600 rather than
	// creating one 0644, and the chmod covers a umask or file system that widened it.
	if err := createPrivate(tmp); err != nil {
		return fmt.Errorf("create backup: %w", err)
	}
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("vacuum into: %w", err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("chmod backup: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sync backup: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync backup: %w", err)
	}
	return nil
}
