package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/lease/recording"
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

const exportSummary = "print the change log as JSON lines, for review after class; with --history, a recording for leaselab replay"

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", exportSummary, "", stderr)
	db := fs.String("db", "./leaselab.db", "SQLite database file of the server")
	after := fs.Int64("after", 0, "export only changes after this revision (not with --history)")
	history := fs.Bool("history", false, "write a recording for leaselab replay: a header line, then every change of the Leases, LeaseCandidates, candidates' views, Namespaces and Events in the scope")
	var scope recording.Scope
	fs.StringVar(&scope.Namespace, "namespace", "", "with --history: record this namespace (default: every namespace)")
	fs.StringVar(&scope.Lease, "lease", "", "with --history: record this lease of --namespace, with the LeaseCandidates that name it, the candidates' views of it and the events about it")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !*history {
		if scope != (recording.Scope{}) {
			return errors.New("--namespace and --lease choose what --history records: add --history")
		}
		// Workshop identities hold tokens, and browser sessions are sign-ins, not changes to
		// review: they stay out of the export.
		return sqlite.Export(ctx, *db, stdout, sqlite.ExportOptions{
			After: *after,
			Skip: func(resource string) bool {
				return resource == auth.IdentityResource || resource == auth.SessionResource
			},
		})
	}
	if *after != 0 {
		return errors.New("--after does not go with --history: a recording holds the whole history of what it records")
	}
	return exportHistory(ctx, stdout, sqlite.LogFile(*db), scope)
}

// exportHistory writes the recording of scope, read from the database file beside a server
// that may be running. The recording is the same as the dashboard's download (web/lease/recording).
func exportHistory(ctx context.Context, w io.Writer, src store.LogReader, scope recording.Scope) error {
	if err := scope.Validate(); err != nil {
		return err
	}
	rec, err := recording.New(kinds.NewRegistry(kinds.DefaultOptions()))
	if err != nil {
		return err
	}
	return rec.Write(ctx, w, src, scope, time.Now())
}
