package main

import (
	"context"
	"fmt"
	"io"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/auth"
)

func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("backup", "write a consistent copy of the database, also while the server runs", " PATH", stderr)
	db := fs.String("db", "./leaselab.db", "SQLite database file of the server")
	dst, err := parseFlagsWord(fs, args) // before or after the flags
	if err != nil {
		return err
	}
	if dst == "" {
		fmt.Fprintln(stderr, "leaselab backup: PATH is required")
		fs.Usage()
		return errUsage
	}
	if err := sqlite.Backup(ctx, *db, dst); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s\n", *db, dst)
	return nil
}

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", "print the change log as JSON lines, for review after class", "", stderr)
	db := fs.String("db", "./leaselab.db", "SQLite database file of the server")
	after := fs.Int64("after", 0, "export only changes after this revision")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// Workshop identities hold tokens: they stay out of the export.
	return sqlite.Export(ctx, *db, stdout, sqlite.ExportOptions{
		After: *after,
		Skip:  func(resource string) bool { return resource == auth.IdentityResource },
	})
}
