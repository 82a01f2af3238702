package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/leaselab/leaselab/store/changelog"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/lease/recording"
	"github.com/leaselab/leaselab/web/play/ui"
)

const replaySummary = "serve a recording (leaselab export --history, or a plain export) read-only, as it was at its last change"

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay", replaySummary, " FILE", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	file, err := parseFlagsWord(fs, args) // before or after the flags
	if err != nil {
		return err
	}
	if file == "" {
		fmt.Fprintln(stderr, "leaselab replay: FILE is required")
		fs.Usage()
		return errUsage
	}
	logger, err := startLogger(ctx, stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "leaselab-replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	replay, err := importRecording(ctx, file, filepath.Join(dir, "replay.db"))
	if err != nil {
		return err
	}
	db := filepath.Join(dir, "replay.db")
	srv, err := startServer(ctx, replayConfig(*addr, db, replay), logger)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "leaselab %s replaying %s on %s, read-only: %d changes%s, revisions %d to %d, recorded %s to %s\n",
		leaselabVersion(), file, srv.URL, replay.Changes, scopeText(replay.Scope), replay.FirstRevision, replay.LastRevision,
		replay.From.Local().Format(time.DateTime), replay.To.Local().Format(time.DateTime))
	srv.printAccess(stdout, db)
	logger.Info("replaying", slog.String("file", file), slog.String("scope", replay.Scope), slog.Time("from", replay.From),
		slog.Time("to", replay.To), slog.Int64("first_revision", replay.FirstRevision), slog.Int64("last_revision", replay.LastRevision))
	return srv.serveUntilDone(ctx)
}

// importRecording builds the database at db from the recording in file, refusing a file that
// holds anything but what recordings hold, or an object the server could not read back.
func importRecording(ctx context.Context, file, db string) (*ui.Replay, error) {
	rec, err := recording.New(kinds.NewRegistry(kinds.DefaultOptions()))
	if err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sum, err := sqlite.Import(ctx, db, f, rec.Checker())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return replayOf(file, sum)
}

// replayOf describes the recording in file from its summary.
func replayOf(file string, sum changelog.Header) (*ui.Replay, error) {
	from, err := time.Parse(time.RFC3339Nano, sum.From)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	to, err := time.Parse(time.RFC3339Nano, sum.To)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &ui.Replay{File: file, Scope: recordedScope(sum), From: from, To: to,
		FirstRevision: sum.FirstRevision, LastRevision: sum.LastRevision, Changes: sum.Changes}, nil
}

// recordedScope says what a recording's header says it holds: "lease demo/x", "namespace demo";
// "" for everything or a file without a header.
func recordedScope(h changelog.Header) string {
	switch {
	case h.Namespace != "" && h.Lease != "":
		return "lease " + h.Namespace + "/" + h.Lease
	case h.Namespace != "":
		return "namespace " + h.Namespace
	}
	return ""
}

// scopeText is a scope in the start banner: " of lease demo/x".
func scopeText(scope string) string {
	if scope == "" {
		return ""
	}
	return " of " + scope
}

// replayConfig is serve's configuration for a replay of the database at db: serve's defaults
// without the election controller (it would write) and without compaction (the recording may
// be older than the age compaction keeps).
func replayConfig(addr, db string, replay *ui.Replay) serveConfig {
	var cfg serveConfig
	cfg.register(flag.NewFlagSet("defaults", flag.ContinueOnError))
	cfg.addr, cfg.db, cfg.replay = addr, db, replay
	cfg.cleController = false
	cfg.compactInterval = -1
	return cfg
}
