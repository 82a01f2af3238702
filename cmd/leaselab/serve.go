package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leaselab/leaselab/cmd/internal/access"
	"github.com/leaselab/leaselab/cmd/internal/logrepeat"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web"
	"github.com/leaselab/leaselab/web/api/front"
	"github.com/leaselab/leaselab/web/api/upstream"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/play/ui"
)

// newUpstream reads --upstream-kubeconfig and builds the forwarder and the mirror into db;
// nil without the flag.
func newUpstream(cfg serveConfig, db *sqlite.DB, logger *slog.Logger) (*web.Upstream, error) {
	if !cfg.upstream.on() {
		return nil, nil
	}
	if cfg.replay != nil {
		return nil, errors.New("a replay cannot stand in front of a cluster")
	}
	cluster, err := cfg.upstream.cluster()
	if err != nil {
		return nil, err
	}
	fwd, mirror, err := upstream.New(logger, cluster, db)
	if err != nil {
		return nil, fmt.Errorf("--upstream-kubeconfig: %w", err)
	}
	return &web.Upstream{Forwarder: fwd, Mirror: mirror}, nil
}

// serveConfig is everything `leaselab serve` is configured with.
type serveConfig struct {
	addr            string
	db              string
	logLevel        string
	logFormat       string
	compactKeep     int64
	compactMaxAge   time.Duration
	compactInterval time.Duration
	coordinated     bool
	shutdownTimeout time.Duration
	profiling       bool
	acceptRollback  bool
	// noImplicitNamespaces answers a create in a missing namespace with 404 instead of
	// creating the namespace (--implicit-namespaces=false).
	noImplicitNamespaces bool

	// The Coordinated Leader Election controller: on when coordinated and cleController are.
	// Zero durations take kube-apiserver's constants.
	cleController       bool
	cleElectionDuration time.Duration
	cleRequeueInterval  time.Duration
	cleLeaseDuration    time.Duration
	cleCandidateTTL     time.Duration
	cleGCPeriod         time.Duration

	access access.Config

	// upstream, when set, puts the server in front of a cluster.
	upstream upstreamConfig

	// replay, when set, serves the database (imported from a recording) read-only, with the
	// clock stopped at the recording's last change (leaselab replay).
	replay *ui.Replay
}

func (c *serveConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&c.db, "db", "./leaselab.db", "SQLite database file (created if missing)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.Int64Var(&c.compactKeep, "compact-keep", 100000, "changes the change log keeps at most (older ones are compacted)")
	durationVar(fs, &c.compactMaxAge, "compact-max-age", 24*time.Hour, "age after which changes are compacted")
	durationVar(fs, &c.compactInterval, "compact-interval", time.Minute, "how often the change log is compacted")
	fs.BoolVar(&c.coordinated, "coordinated-leader-election", true, "keep Lease strategy and preferredHolder (Coordinated Leader Election)")
	fs.BoolVar(&c.profiling, "profiling", false, "serve Go profiles under /debug/pprof/ (go tool pprof http://ADDR/debug/pprof/profile)")
	durationVar(fs, &c.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long shutdown waits for requests in flight")
	fs.BoolVar(&c.acceptRollback, "accept-rollback", false, "open a database that is behind the revisions it acknowledged (its -wal file lost after a crash, or an older copy put in its place); new writes continue past every revision handed out, and clients that saw newer ones must relist")
	fs.Var(negatedBool{&c.noImplicitNamespaces}, "implicit-namespaces", "create a namespace the first time something is written in it; false answers 404 as kube-apiserver does (and creates default, kube-system, kube-public and kube-node-lease at start)")
	c.access.Register(fs)
	c.upstream.register(fs)
	fs.BoolVar(&c.cleController, "cle-controller", true, "run the Coordinated Leader Election controller, which picks Lease holders among LeaseCandidates (needs --coordinated-leader-election)")
	durationVar(fs, &c.cleElectionDuration, "cle-election-duration", 5*time.Second, "how long the election controller waits for candidates to answer a ping")
	durationVar(fs, &c.cleRequeueInterval, "cle-requeue-interval", 5*time.Second, "how soon the election controller looks at a Lease again")
	durationVar(fs, &c.cleLeaseDuration, "cle-lease-duration", 5*time.Second, "leaseDurationSeconds the election controller writes with a new holder (whole seconds)")
	durationVar(fs, &c.cleCandidateTTL, "cle-candidate-ttl", 30*time.Minute, "how long a LeaseCandidate counts without renewing before it is ignored and deleted")
	durationVar(fs, &c.cleGCPeriod, "cle-gc-period", 30*time.Minute, "how often LeaseCandidates that stopped renewing are deleted")
}

// negatedBool is a boolean flag that stores the opposite of its value, so that a flag whose
// default is true leaves a false zero value in the configuration.
type negatedBool struct{ p *bool }

func (b negatedBool) String() string {
	if b.p == nil {
		return "false" // the zero Value, which flag compares with the default
	}
	return strconv.FormatBool(!*b.p)
}

func (b negatedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b.p = !v
	return nil
}

func (b negatedBool) IsBoolFlag() bool { return true }

// validate checks the flags that need no database: the listen address and the public URL.
func (c *serveConfig) validate() error {
	_, port, err := net.SplitHostPort(c.addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			err = errors.New(ae.Err)
		}
		return fmt.Errorf("--addr %q: %w (want host:port, such as 127.0.0.1:8080)", c.addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("--addr %q: unknown port %q", c.addr, port)
	}
	if err := c.upstream.validate(); err != nil {
		return err
	}
	return c.access.Validate()
}

// electionOptions are the election controller's options from the flags.
func (c *serveConfig) electionOptions(logger *slog.Logger) (election.Options, error) {
	if c.cleLeaseDuration != 0 && (c.cleLeaseDuration < time.Second || c.cleLeaseDuration%time.Second != 0) {
		return election.Options{}, fmt.Errorf("--cle-lease-duration: %v is not a whole number of seconds", c.cleLeaseDuration)
	}
	return election.Options{
		Logger:                 logger,
		ElectionDuration:       c.cleElectionDuration,
		RequeueInterval:        c.cleRequeueInterval,
		LeaseDurationSeconds:   int32(c.cleLeaseDuration / time.Second),
		CandidateValidDuration: c.cleCandidateTTL,
		GCPeriod:               c.cleGCPeriod,
	}, nil
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg serveConfig
	fs := newFlagSet("serve", "serve the API, the dashboard and the browser candidates", "", stderr)
	cfg.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	logger, err := startLogger(ctx, stderr, cfg.logLevel, cfg.logFormat)
	if err != nil {
		return err
	}
	srv, err := startServer(ctx, cfg, logger)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "leaselab %s serving on %s (database %s)\n", leaselabVersion(), srv.URL, cfg.db)
	srv.printAccess(stdout, cfg.db)
	if srv.mirror != nil {
		cluster := srv.mirror.Cluster()
		ns := "every namespace"
		if len(cluster.Namespaces) > 0 {
			ns = "namespaces " + strings.Join(cluster.Namespaces, ", ")
		}
		fmt.Fprintf(stdout, "  cluster:    %s as %s, %s; the cluster's own controller decides elections\n", cluster.Server(), cluster.User, ns)
		if why := srv.mirror.CandidatesRefused(); why != "" {
			fmt.Fprintf(stdout, "  coordinated candidates refused: %s\n", why)
		}
	}
	return srv.serveUntilDone(ctx)
}

// printAccess tells how to reach the server: the dashboard and kubectl, and with tokens on how
// to sign in.
func (rs *runningServer) printAccess(w io.Writer, db string) {
	if rs.access.Auth != nil {
		rs.access.Print(w, rs.URL, db, invokedName())
		return
	}
	fmt.Fprintf(w, "  dashboard:  %s/\n  kubectl:    %s kubeconfig --server %s > leaselab.kubeconfig; kubectl --kubeconfig leaselab.kubeconfig get leases -A\n", rs.URL, invokedName(), rs.URL)
}

// serveUntilDone serves until ctx ends (a signal), then shuts down.
func (rs *runningServer) serveUntilDone(ctx context.Context) error {
	<-ctx.Done()
	rs.log.Info("shutting down")
	return rs.Close()
}

// startLogger builds the process logger and, for as long as ctx lasts, writes the counts of
// the log lines it folded (cmd/internal/logrepeat).
func startLogger(ctx context.Context, w io.Writer, level, format string) (*slog.Logger, error) {
	logger, err := newLogger(w, level, format)
	if err != nil {
		return nil, err
	}
	if rh, ok := logger.Handler().(*logrepeat.Handler); ok {
		go rh.Run(ctx)
	}
	return logger, nil
}

// newLogger builds the process logger.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler
	switch strings.ToLower(format) {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
	return slog.New(logrepeat.NewHandler(h, time.Now)), nil
}

// runningServer is a started leaselab: the store, the HTTP server and its listener.
type runningServer struct {
	URL string

	log     *slog.Logger
	db      *sqlite.DB
	web     *web.Server
	served  chan error
	timeout time.Duration
	access  *access.Gate

	// election is the Coordinated Leader Election controller, nil when it is off.
	election *election.Controller
	// mirror is the cluster's mirror, in front of a cluster; nil otherwise.
	mirror *upstream.Mirror

	closeOnce sync.Once
	closeErr  error
}

// startServer opens the database and serves on cfg.addr until Close. Tests use it to run the
// whole program in-process on 127.0.0.1:0.
func startServer(ctx context.Context, cfg serveConfig, logger *slog.Logger) (*runningServer, error) {
	// Flags that cannot work are reported before the database file is created.
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// A start that fails (the port is taken, say) leaves no new files behind.
	before, _ := filepath.Glob(globEscape(cfg.db) + "*")
	rs, err := openServer(ctx, cfg, logger)
	if err != nil {
		after, _ := filepath.Glob(globEscape(cfg.db) + "*")
		for _, f := range after {
			if !slices.Contains(before, f) {
				os.Remove(f)
			}
		}
	}
	return rs, err
}

// globEscape quotes the glob metacharacters of a path.
func globEscape(path string) string {
	var b strings.Builder
	for _, r := range path {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// openServer opens the database and starts serving.
func openServer(ctx context.Context, cfg serveConfig, logger *slog.Logger) (*runningServer, error) {
	start := time.Now()
	// Listening comes first: the join links and kubeconfigs name the address the server
	// listens at (with port 0, known only now) when no --public-url is given.
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	db, err := sqlite.Open(ctx, cfg.db, sqlite.Options{CompactKeep: cfg.compactKeep, CompactMaxAge: cfg.compactMaxAge, CompactInterval: cfg.compactInterval, AcceptRollback: cfg.acceptRollback}, logger)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	rs, err := newServer(ctx, cfg, ln.Addr().String(), db, logger)
	if err != nil {
		ln.Close()
		db.Close()
		return nil, err
	}
	ln = rs.access.Wrap(ln)
	rs.URL = rs.access.Scheme() + "://" + ln.Addr().String()
	rs.log, rs.db, rs.timeout, rs.served = logger, db, cfg.shutdownTimeout, make(chan error, 1)
	go func() { rs.served <- rs.web.Serve(ln) }()
	announced := access.AnnouncedURL(cfg.access.PublicURL, rs.URL)
	if err := os.WriteFile(access.URLPath(cfg.db), []byte(announced+"\n"), 0o644); err != nil {
		logger.Warn("could not record the server's URL beside the database; leaselab kubeconfig --db needs --server", slog.Any("error", err))
	}
	logger.Info("serving", slog.String("url", rs.URL), slog.String("db", cfg.db), slog.Duration("startup", time.Since(start)))
	return rs, nil
}

// newServer sets up who may reach the server and the cluster it stands in front of, builds
// the server (web.New) and creates the participants' namespaces. listening is the address the
// listener got. The server returned does not serve yet.
func newServer(ctx context.Context, cfg serveConfig, listening string, db *sqlite.DB, logger *slog.Logger) (*runningServer, error) {
	ac := cfg.access
	ac.Replay = cfg.replay != nil
	acc, err := access.New(ctx, ac, cfg.addr, listening, cfg.db, db, logger)
	if err != nil {
		return nil, err
	}
	up, err := newUpstream(cfg, db, logger)
	if err != nil {
		return nil, err
	}
	wc, err := cfg.web(db, acc, up, logger)
	if err != nil {
		up.Close()
		return nil, err
	}
	w, err := web.New(ctx, wc)
	if err != nil {
		return nil, err
	}
	if err := acc.CreateNamespaces(ctx, w.Transport()); err != nil {
		if up == nil {
			w.Shutdown(context.Background())
			return nil, err
		}
		// The cluster decides its namespaces: the participants' may be there already, or the
		// identity may not create them.
		logger.Warn("the participants' namespaces could not all be created on the cluster; create them there", slog.Any("error", err))
	}
	rs := &runningServer{web: w, access: acc, election: w.Elections()}
	if up != nil {
		rs.mirror = up.Mirror
	}
	return rs, nil
}

// web is the server's configuration: the flags', with the access, the cluster and the store.
// The election controller runs when Coordinated Leader Election and --cle-controller are on,
// unless in front of a cluster, whose own controller decides.
func (c *serveConfig) web(db *sqlite.DB, acc *access.Gate, up *web.Upstream, logger *slog.Logger) (web.Config, error) {
	wc := web.Config{
		Config: front.Config{
			Logger:                    logger,
			Store:                     db,
			Version:                   serverVersion(),
			CoordinatedLeaderElection: c.coordinated,
			Profiling:                 c.profiling,
			NoImplicitNamespaces:      c.noImplicitNamespaces,
		},
		Replay:   c.replay,
		Upstream: up,
	}
	if acc.Auth != nil {
		wc.Auth = acc.Auth // a nil *auth.Auth would be a front.Auth that is not nil
	}
	if c.coordinated && c.cleController && up == nil {
		opts, err := c.electionOptions(logger)
		if err != nil {
			return web.Config{}, err
		}
		wc.Election = &opts
	}
	return wc, nil
}

// Close stops the server (web.Server.Shutdown: the election controller, the mirror, every
// watch, then the requests in flight, waited for up to the shutdown timeout) and closes the
// database.
func (rs *runningServer) Close() error {
	rs.closeOnce.Do(func() { rs.closeErr = rs.close() })
	return rs.closeErr
}

func (rs *runningServer) close() error {
	timeout := rs.timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := rs.web.Shutdown(ctx)
	if serr := <-rs.served; serr != nil && err == nil {
		err = serr
	}
	if cerr := rs.db.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if errors.Is(err, context.DeadlineExceeded) {
		rs.log.Warn("shutdown timed out; requests in flight were cut off")
		err = nil
	}
	return err
}
