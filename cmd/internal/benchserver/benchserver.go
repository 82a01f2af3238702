// Package benchserver is the server `leaselab bench workshop` measures: a `leaselab serve
// --workshop` it starts as a child process (Start), or one already running, whose URL,
// certificate and tokens it reads beside the database (Read).
package benchserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/cmd/internal/access"
	"github.com/leaselab/leaselab/cmd/internal/bench"
	"github.com/leaselab/leaselab/cmd/internal/tlscert"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/auth"
)

// Read fills cfg with what is kept beside a workshop's database: the server's URL (unless
// server is given), its certificate, the instructor's token and those of the first n
// participants. It fails when one is missing or the workshop has fewer participants.
func Read(ctx context.Context, cfg *bench.WorkshopConfig, db, server string, n int) error {
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

// Server is a `leaselab serve --workshop` started for a benchmark, in a directory of its own.
type Server struct {
	// DB is its database, URL where it serves, PID its process.
	DB, URL, PID string

	cmd *exec.Cmd
	dir string
}

// Start starts this very program as `leaselab serve --workshop n` on a free port of 127.0.0.1
// with a fresh database, its log to stderr, and returns once it serves. It fails when the
// server exits first, does not serve within a minute, or ctx ends.
func Start(ctx context.Context, n int, stderr io.Writer) (*Server, error) {
	return StartServe(ctx, stderr, "--workshop", strconv.Itoa(n))
}

// StartServe is Start with other flags of serve than --workshop (none: no workshop).
func StartServe(ctx context.Context, stderr io.Writer, flags ...string) (*Server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "leaselab-bench-workshop-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, DB: filepath.Join(dir, "leaselab.db")}
	s.cmd = exec.Command(exe, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", s.DB, "--log-level", "warn"}, flags...)...)
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
	s.PID = strconv.Itoa(s.cmd.Process.Pid)
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
			s.URL = url
			return s, nil
		}
		err = errors.New("the server exited before it served")
	case <-timer.C:
		err = errors.New("the server did not serve within a minute")
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.Stop()
	return nil, err
}

// Stop ends the server as Ctrl-C does (killing it if it takes more than 10 s) and removes its
// directory.
func (s *Server) Stop() {
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
