// Package leasetest starts a leaselab API server inside a Go test, for testing lease and
// leader-election code with client-go against a real Coordination API: optimistic concurrency,
// field selectors, watches, LeaseCandidates and the Coordinated Leader Election controller, as
// `leaselab serve` has them.
//
//	srv := leasetest.Start(t)
//	client := kubernetes.NewForConfigOrDie(srv.Config())
//
// The server runs in the test's process, on SQLite in tb.TempDir(); its clients reach it
// through an in-process transport (web/api/inprocess), not a network. Started inside a
// testing/synctest bubble, every goroutine and timer of the server lives in the bubble and its
// transport never waits on anything outside it, so client-go's leader election (whose clock
// cannot be injected) runs on the bubble's fake clock: a 15 s failover takes milliseconds.
// Start the server in the bubble whose clients use it; it works outside a bubble too, in real
// time. Inside one, the server's timers (its election controller's informers and their watches)
// keep fake time moving: a test that deadlocks spins until go test's -timeout instead of
// failing with synctest's deadlock report, so stop electors and informers with t.Context().
//
// Tests inject faults by client (Fail, Hang, Slow, FailWrites, Pause) and read what happened
// from the server's change log (History, Overlaps, RequireNoOverlap).
//
// Unlike web, which leaves the choice of store to cmd, this package opens the SQLite store
// itself: it wires a whole server for tests, as cmd/leaselab does for people. It builds it on
// the API-only layer of web.New (web/api/front.New) and runs the election controller as web.New
// does (election.NewForConfig), without the browser screens.
package leasetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/front"
	"github.com/leaselab/leaselab/web/api/inprocess"
	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/status"
	"github.com/leaselab/leaselab/web/lease/election"
)

// ControllerName is the client name of the server's Coordinated Leader Election controller:
// Fail, Hang and Slow accept it, to fault the controller's own requests.
const ControllerName = election.DefaultFieldManager

// Option configures Start.
type Option func(*options)

type options struct {
	election election.Options
	logger   *slog.Logger
	dbPath   string
	// implicitNamespaces creates a namespace on first write, as leaselab serve does; by
	// default a create in a missing namespace is 404, as on a cluster.
	implicitNamespaces bool
	listen             bool
	timeLimit          time.Duration
}

// WithElection sets the Coordinated Leader Election controller's options: its timings
// (ElectionDuration, RequeueInterval, LeaseDurationSeconds, CandidateValidDuration, GCPeriod)
// and, when set, its clock and logger. Zero fields take kube-apiserver's values, as in
// `leaselab serve`.
func WithElection(o ElectionOptions) Option { return func(opts *options) { opts.election = o } }

// WithLogger sends the server's logs to l. Without it, errors go to the test's log (tb.Log)
// while the server runs: a request cancelled by its client (a crashed elector's) is no error.
func WithLogger(l *slog.Logger) Option { return func(opts *options) { opts.logger = l } }

// WithDatabase keeps the SQLite database at path instead of in tb.TempDir(), to read it after
// the test (sqlite3 path 'select * from changes').
func WithDatabase(path string) Option { return func(opts *options) { opts.dbPath = path } }

// WithImplicitNamespaces creates a namespace the first time something is written in it, as
// leaselab serve does by default. Without it the server answers a create in a missing
// namespace with 404 NotFound, as kube-apiserver does, so that code tested here is ready for a
// cluster; default, kube-system, kube-public and kube-node-lease exist from the start.
func WithImplicitNamespaces() Option { return func(opts *options) { opts.implicitNamespaces = true } }

// WithListener also serves the server over HTTP on 127.0.0.1 (a free port), for clients that
// are not Go programs (kubectl); URL names it. Requests over it have no client name: Pause and
// FailWrites apply to them, Fail, Hang and Slow do not. Not inside a synctest bubble: a
// goroutine waiting on the network is not durably blocked, so fake time would stand still.
func WithListener() Option { return func(opts *options) { opts.listen = true } }

// Server is a leaselab API server running in the test's process. Its methods are safe for
// concurrent use.
type Server struct {
	tb        testing.TB
	db        *sqlite.DB
	api       *front.API
	transport *inprocess.Transport // to serve, through the faults
	ctrl      *election.Controller
	log       *logSink

	stopCtrl func() // ends the controller and waits for it
	http     *http.Server
	served   chan error
	url      string

	faults faults
	// stopping closes when Close begins: waits on faults end, and new requests are refused.
	stopping  chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	closing  bool           // set with stopping, under mu, so that inflight.Add never races Wait
	inflight sync.WaitGroup // requests being served
}

// serverVersion is what /version says: the Kubernetes release whose API leaselab serves.
var serverVersion = version.Info{
	Major: "1", Minor: "36", EmulationMajor: "1", EmulationMinor: "36",
	MinCompatibilityMajor: "1", MinCompatibilityMinor: "35",
	GitVersion: "v1.36.3+leasetest", GitTreeState: "clean",
}

// Start starts a server for the test and stops it when the test ends (tb.Cleanup): SQLite in
// tb.TempDir(), Coordinated Leader Election on with its controller running, no network
// listener unless WithListener. It fails the test when the server cannot start.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	guardErrorBackoff()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := &Server{tb: tb, stopping: make(chan struct{})}
	s.faults.init()
	logger := o.logger
	if logger == nil {
		s.log = &logSink{tb: tb}
		logger = slog.New(slog.NewTextHandler(s.log, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	path := o.dbPath
	if path == "" {
		path = filepath.Join(tb.TempDir(), "leaselab.db")
	}
	// The history is what tests look at: no background compaction.
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		tb.Fatalf("leasetest: open the store: %v", err)
	}
	s.db = db
	api, err := front.New(front.Config{
		Logger:                    logger,
		Store:                     db,
		Version:                   serverVersion,
		CoordinatedLeaderElection: true,
		// Few tests ask for them (kubectl apply, explain): a start costs a fraction of its CPU.
		OpenAPIOnDemand:      true,
		NoImplicitNamespaces: !o.implicitNamespaces,
	})
	if err != nil {
		db.Close()
		tb.Fatalf("leasetest: start the API: %v", err)
	}
	s.api = api
	s.transport = inprocess.New(http.HandlerFunc(s.serve))
	// From here on Close undoes whatever was started.
	tb.Cleanup(s.Close)

	if err := s.startElection(o.election, logger); err != nil {
		tb.Fatalf("leasetest: start the election controller: %v", err)
	}
	if o.listen {
		if err := s.listen(); err != nil {
			tb.Fatalf("leasetest: %v", err)
		}
	}
	s.watchTimeLimit(o.timeLimit)
	return s
}

// startElection runs the Coordinated Leader Election controller as `leaselab serve` does: a
// client of the server in process, with its own field manager, here under the client name
// ControllerName.
func (s *Server) startElection(eo election.Options, logger *slog.Logger) error {
	if eo.Logger == nil {
		eo.Logger = logger
	}
	ctrl, err := election.NewForConfig(s.ConfigFor(ControllerName), eo)
	if err != nil {
		return err
	}
	s.ctrl, s.stopCtrl = ctrl, ctrl.Start()
	return nil
}

// listen serves the server over HTTP on 127.0.0.1.
func (s *Server) listen() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	s.url = "http://" + ln.Addr().String()
	s.http = &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.api.Context() },
	}
	s.served = make(chan error, 1)
	go func() { s.served <- s.http.Serve(ln) }()
	return nil
}

// Config returns a client-go configuration for the server: typed, dynamic and metadata
// clients, informers, tools/leaderelection and controller-runtime work with it. Its requests
// go through the in-process transport; they have no client name, so only Pause and FailWrites
// affect them. Each call returns a new Config, which the caller may change (its Transport
// excepted).
func (s *Server) Config() *rest.Config { return s.ConfigFor("") }

// ConfigFor is Config for the client called name: Fail, Hang and Slow with that name affect
// the requests made with it and with every Config made for the same name. Its UserAgent is
// name, which also names the field manager of its writes.
func (s *Server) ConfigFor(name string) *rest.Config {
	rc := s.transport.RESTConfig(name)
	rc.Transport = namedTransport{name: name, next: s.transport}
	return rc
}

// URL is the server's HTTP address with WithListener, else "".
func (s *Server) URL() string { return s.url }

// Decisions returns the Coordinated Leader Election controller's decisions about one Lease,
// oldest first: why it pinged, waited, elected or left the Lease alone.
func (s *Server) Decisions(namespace, lease string) []Decision {
	return s.ctrl.Decisions(namespace, lease)
}

// Close stops the server: the election controller, then every request and watch (requests
// held by a fault end), then the store. The test's cleanup calls it; it may be
// called before, and more than once. It fails the test when the store does not close cleanly.
func (s *Server) Close() {
	s.closeOnce.Do(s.close)
}

func (s *Server) close() {
	s.mu.Lock()
	s.closing = true
	close(s.stopping)
	s.mu.Unlock()
	if s.stopCtrl != nil {
		s.stopCtrl()
	}
	if s.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := s.http.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			s.tb.Errorf("leasetest: shut the listener down: %v", err)
		}
		cancel()
		if err := <-s.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.tb.Errorf("leasetest: serve: %v", err)
		}
	}
	s.api.Close() // ends every watch
	s.inflight.Wait()
	if err := s.db.Close(); err != nil {
		s.tb.Errorf("leasetest: close the store: %v", err)
	}
	if s.log != nil {
		s.log.close()
	}
}

// clientKey is the context key of a request's client name.
type clientKey struct{}

// namedTransport marks each request with the name of the client that sends it.
type namedTransport struct {
	name string
	next http.RoundTripper
}

func (t namedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.name == "" {
		return t.next.RoundTrip(req)
	}
	return t.next.RoundTrip(req.WithContext(context.WithValue(req.Context(), clientKey{}, t.name)))
}

// CancelRequest is what client-go's transports ask of the one under them when a request's
// rest.Config.Timeout passes; without it they log "unable to cancel request". There is
// nothing to do: the request ends with its context, which the timeout has ended.
func (namedTransport) CancelRequest(*http.Request) {}

// errStopping answers the requests that arrive, or wait on a fault, while the server stops.
var errStopping = apierrors.NewServiceUnavailable("leasetest: the server is shutting down")

// statusForm frames the Status of an injected fault as the API handlers frame theirs.
var statusForm = status.API([]string{status.MediaJSON, status.MediaYAML, status.MediaProtobuf})

// serve is the server's handler: the faults, then the API.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		status.Write(w, r, errStopping, statusForm)
		return
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	defer s.inflight.Done()
	name, _ := r.Context().Value(clientKey{}).(string)
	info := request.Parse(r)
	var code failure
	switch err := s.faults.apply(r.Context(), name, info, s.stopping); {
	case errors.Is(err, errBreak):
		// net/http closes the connection; the in-process transport fails the request as a
		// reset connection.
		panic(http.ErrAbortHandler)
	case errors.As(err, &code):
		status.Write(w, r, injected(int(code), r, info), statusForm)
		return
	case err != nil:
		status.Write(w, r, err, statusForm)
		return
	}
	if info.Verb == "watch" && name != "" {
		// Fail and Hang end the client's open watches, as a broken connection would.
		ctx, done := s.faults.watching(r.Context(), name)
		defer done()
		r = r.WithContext(ctx)
	}
	s.api.Handler().ServeHTTP(w, r)
}

// injected is the Status error of an injected failure with code, worded as client-go words a
// bare status code.
func injected(code int, r *http.Request, info request.Info) error {
	gr := schema.GroupResource{Group: info.Group, Resource: info.Resource}
	return apierrors.NewGenericServerResponse(code, r.Method, gr, info.Name, "leasetest: injected failure", 0, false)
}

// logSink writes log records to the test's log until the server is closed: a test's log may
// not be written once it has ended.
type logSink struct {
	tb     testing.TB
	mu     sync.Mutex
	closed bool
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.tb.Logf("leaselab: %s", trimNewline(p))
	}
	return len(p), nil
}

func (l *logSink) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

func trimNewline(p []byte) []byte {
	if n := len(p); n > 0 && p[n-1] == '\n' {
		return p[:n-1]
	}
	return p
}
