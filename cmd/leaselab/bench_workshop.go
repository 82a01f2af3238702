package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/leaselab/leaselab/cmd/internal/bench"
	"github.com/leaselab/leaselab/cmd/internal/benchserver"
	"github.com/leaselab/leaselab/cmd/internal/joinbench"
)

const benchWorkshopSummary = "simulate a workshop on one server: candidate tabs, participants' dashboards and the instructor's"

const benchRoomSummary = "simulate a conference room: phones joined by the QR link, all candidates on one lease, with the projector's stage"

// isWorkshopBench reports whether the arguments of `leaselab bench` name the workshop
// workload, which has flags of its own, and returns them without it.
func isWorkshopBench(args []string) ([]string, bool) { return benchWorkload(args, "workshop") }

// benchWorkload reports whether the arguments of `leaselab bench` name the workload word, and
// returns them without it.
func benchWorkload(args []string, word string) ([]string, bool) {
	for i, a := range args {
		if a != word {
			continue
		}
		// The word, not the value of a flag before it (--namespace workshop).
		if i > 0 {
			prev := args[i-1]
			if strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") && prev != "--json" && prev != "-json" {
				continue
			}
		}
		return append(args[:i:i], args[i+1:]...), true
	}
	return nil, false
}

// runBenchWorkshop is `leaselab bench workshop`: it starts a server in workshop mode (or loads
// the one whose database --db names; cmd/internal/benchserver), runs bench.RunWorkshop against
// it and prints the report.
func runBenchWorkshop(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench workshop", benchWorkshopSummary, "", stderr)
	participants := fs.Int("participants", 30, "participants taking part, each with a dashboard and its candidate tabs")
	tabs := fs.Int("tabs", 4, "candidate tabs each participant opens, each leading a lease of its own in the participant's namespace")
	duration := fs.Duration("duration", 30*time.Second, "how long the measured part runs, once every tab leads")
	leaseDuration := fs.Duration("lease-duration", 10*time.Second, "the tabs' leaseDuration")
	renewDeadline := fs.Duration("renew-deadline", 7*time.Second, "the tabs' renewDeadline")
	retryPeriod := fs.Duration("retry-period", 2*time.Second, "the tabs' retryPeriod (a leader renews this often)")
	db := fs.String("db", "", "database of a running workshop server to load instead of starting one: its URL, certificate and tokens are read beside it")
	server := fs.String("server", "", "with --db: URL of that server (default: the URL it announced)")
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the load generator to this file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *participants < 1:
		return fmt.Errorf("--participants %d: want at least 1", *participants)
	case *tabs < 1:
		return fmt.Errorf("--tabs %d: want at least 1", *tabs)
	case *duration <= 0:
		return fmt.Errorf("--duration %s: want more than 0", *duration)
	case *server != "" && *db == "":
		return errors.New("--server needs --db, where the workshop's tokens are")
	}
	// The progress lines and the server's own log share stderr, from two goroutines.
	stderr = &lockedWriter{w: stderr}
	cfg := bench.WorkshopConfig{Tabs: *tabs, Duration: *duration, LeaseDuration: *leaseDuration,
		RenewDeadline: *renewDeadline, RetryPeriod: *retryPeriod, Progress: stderr}
	if *db == "" {
		fmt.Fprintf(stderr, "starting leaselab serve --workshop %d\n", *participants)
		srv, err := benchserver.Start(ctx, *participants, stderr)
		if err != nil {
			return err
		}
		defer srv.Stop()
		*db, *server, cfg.ServerPID = srv.DB, srv.URL, srv.PID
	}
	if err := benchserver.Read(ctx, &cfg, *db, *server, *participants); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	return runWorkshopReport(ctx, cfg, *jsonOut, stdout)
}

// runBenchRoom is `leaselab bench room`: a server in workshop mode with one participant per
// phone (or the one whose database --db names), and bench.RunWorkshop in room mode against it.
func runBenchRoom(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench room", benchRoomSummary, "", stderr)
	candidates := fs.Int("candidates", 100, "phones in the room, each a candidate tab on the arena's lease")
	duration := fs.Duration("duration", 30*time.Second, "how long the measured part runs, once one candidate leads")
	retryPeriod := fs.Duration("retry-period", 2*time.Second, "the candidates' retryPeriod (leaseDuration 10 s and renewDeadline 7 s, the tab's, unless it is over 2 s)")
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *candidates < 1:
		return fmt.Errorf("--candidates %d: want at least 1", *candidates)
	case *duration <= 0:
		return fmt.Errorf("--duration %s: want more than 0", *duration)
	case *retryPeriod <= 0 || *retryPeriod > 2*time.Second:
		return fmt.Errorf("--retry-period %s: want more than 0 and at most 2s", *retryPeriod)
	}
	stderr = &lockedWriter{w: stderr}
	cfg := bench.WorkshopConfig{Room: true, Duration: *duration, RetryPeriod: *retryPeriod, Progress: stderr}
	fmt.Fprintf(stderr, "starting leaselab serve --workshop %d\n", *candidates)
	srv, err := benchserver.Start(ctx, *candidates, stderr)
	if err != nil {
		return err
	}
	defer srv.Stop()
	cfg.ServerPID = srv.PID
	if err := benchserver.Read(ctx, &cfg, srv.DB, srv.URL, *candidates); err != nil {
		return err
	}
	return runWorkshopReport(ctx, cfg, *jsonOut, stdout)
}

// runBenchJoin is `leaselab bench join`: a phone's wait from the join link to a candidate
// (cmd/internal/joinbench).
func runBenchJoin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench join", joinbench.Summary, "", stderr)
	cmd := joinbench.Flags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return cmd.Run(ctx, stdout, &lockedWriter{w: stderr})
}

// runWorkshopReport runs bench.RunWorkshop with cfg and prints its report, as JSON with asJSON.
func runWorkshopReport(ctx context.Context, cfg bench.WorkshopConfig, asJSON bool, stdout io.Writer) error {
	rep, err := bench.RunWorkshop(ctx, cfg)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	_, err = rep.WriteTo(stdout)
	return err
}

// lockedWriter serializes the writes of several goroutines to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
