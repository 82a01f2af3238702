package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leaselab/leaselab/cmd/internal/access"
	"github.com/leaselab/leaselab/cmd/internal/bench"
	"github.com/leaselab/leaselab/cmd/internal/tlscert"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/auth"
)

const benchWorkshopSummary = "simulate a workshop on one server: candidate tabs, participants' dashboards and the instructor's"

// isWorkshopBench reports whether the arguments of `leaselab bench` name the workshop
// workload, which has flags of its own, and returns them without it.
func isWorkshopBench(args []string) ([]string, bool) {
	for i, a := range args {
		if a != "workshop" {
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
// the one whose database --db names), runs bench.RunWorkshop against it and prints the
// report.
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
		srv, err := startWorkshopServer(ctx, *participants, stderr)
		if err != nil {
			return err
		}
		defer srv.stop()
		*db, *server, cfg.ServerPID = srv.db, srv.url, srv.pid
	}
	if err := readWorkshop(ctx, &cfg, *db, *server, *participants); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	rep, err := bench.RunWorkshop(ctx, cfg)
	if err != nil {
		return err
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	_, err = rep.WriteTo(stdout)
	return err
}

// readWorkshop fills cfg with what is kept beside a workshop's database: the server's URL
// (unless server is given), its certificate, the instructor's token and those of the first n
// participants.
func readWorkshop(ctx context.Context, cfg *bench.WorkshopConfig, db, server string, n int) error {
	if server == "" {
		u, err := os.ReadFile(access.URLPath(db))
		if err != nil {
			return fmt.Errorf("the URL of the server of %s: %w (give --server)", db, err)
		}
		server = string(bytes.TrimSpace(u))
	}
	cfg.URL = server
	certFile, _ := tlscert.Paths(db)
	if ca, err := os.ReadFile(certFile); err == nil {
		cfg.CA = ca
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	objs, err := sqlite.ReadObjects(ctx, db, auth.IdentityResource)
	if err != nil {
		return err
	}
	for _, o := range objs {
		t, err := auth.DecodeIdentity(o.Value)
		if err != nil {
			return err
		}
		switch {
		case t.User.Role == auth.RoleInstructor:
			cfg.Instructor = t.Token
		case len(cfg.Participants) < n:
			cfg.Participants = append(cfg.Participants, bench.WorkshopParticipant{Name: t.User.Name, Namespace: t.User.Namespace, Token: t.Token})
		}
	}
	if cfg.Instructor == "" || len(cfg.Participants) < n {
		return fmt.Errorf("%s holds a workshop of %d participants (and %d instructor): want %d participants", db, len(cfg.Participants), btoi(cfg.Instructor != ""), n)
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// workshopServer is a `leaselab serve --workshop` started for a benchmark, in a directory of
// its own.
type workshopServer struct {
	cmd     *exec.Cmd
	dir     string
	db, url string
	pid     string
}

// startWorkshopServer starts this very program as `leaselab serve --workshop n` on a free
// port of 127.0.0.1 with a fresh database, and returns once it serves.
func startWorkshopServer(ctx context.Context, n int, stderr io.Writer) (*workshopServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "leaselab-bench-workshop-")
	if err != nil {
		return nil, err
	}
	s := &workshopServer{dir: dir, db: filepath.Join(dir, "leaselab.db")}
	s.cmd = exec.Command(exe, "serve", "--addr", "127.0.0.1:0", "--db", s.db, "--workshop", strconv.Itoa(n), "--log-level", "warn")
	s.cmd.Stderr = stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.pid = strconv.Itoa(s.cmd.Process.Pid)
	served := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if _, rest, ok := strings.Cut(lines.Text(), " serving on "); ok {
				url, _, _ := strings.Cut(rest, " ")
				served <- url
			}
		}
		close(served)
	}()
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	select {
	case url, ok := <-served:
		if ok {
			s.url = url
			return s, nil
		}
		err = errors.New("the server exited before it served")
	case <-timer.C:
		err = errors.New("the server did not serve within a minute")
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.stop()
	return nil, err
}

// stop ends the server as Ctrl-C does (killing it if it takes more than 10 s) and removes its
// directory.
func (s *workshopServer) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	os.RemoveAll(s.dir)
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
