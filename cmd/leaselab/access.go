package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/api/inprocess"
)

// accessConfig is who may reach `leaselab serve` and how: tokens, the workshop, TLS and the
// limits that keep a shared room alive.
type accessConfig struct {
	tokenFile   string
	workshop    int
	tls         string
	tlsCertFile string
	tlsKeyFile  string
	http2       bool
	publicURL   string
	rateQPS     float64
	rateBurst   int
	maxWatchers int
	maxObjects  int
	maxBytes    int

	// replay: the database was built from a file anyone may have written, which never decides
	// who may reach the server: workshop identities in it are not loaded.
	replay bool
}

func (c *accessConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.tokenFile, "token-file", "", `static bearer tokens, as kube-apiserver's --token-file: CSV lines token,user,uid,"group1,group2"; users in group leaselab:instructors or system:masters are instructors, others participants writing in the namespace named as them and in "arena"`)
	fs.IntVar(&c.workshop, "workshop", 0, "workshop mode: create N participants (and an instructor) with tokens and namespaces, kept in the database; the instructor's page is /workshop")
	fs.StringVar(&c.tls, "tls", "auto", "serve HTTPS: on, off, or auto (on whenever tokens are on: --workshop, --token-file or a database that ran a workshop; and with --tls-cert-file)")
	fs.StringVar(&c.tlsCertFile, "tls-cert-file", "", "PEM certificate (chain) for HTTPS; without it a self-signed certificate is generated beside the database")
	fs.StringVar(&c.tlsKeyFile, "tls-private-key-file", "", "PEM private key of --tls-cert-file")
	fs.BoolVar(&c.http2, "http2", false, "offer HTTP/2 over TLS as kube-apiserver does, so that client-go puts its requests and watches on one connection; off: HTTP/1.1, which costs Go's server a quarter to a third less CPU per request (BENCHMARKS.md). WebSockets use HTTP/1.1 either way")
	fs.StringVar(&c.publicURL, "public-url", "", "URL participants reach this server at, for join links and kubeconfigs (default: the address it listens at, a wildcard one named by this machine's host name)")
	fs.Float64Var(&c.rateQPS, "rate-limit-qps", 20, "requests per second each identity may make when tokens are on (429 beyond); 0 for no limit")
	fs.IntVar(&c.rateBurst, "rate-limit-burst", 100, "burst of requests each identity may make above --rate-limit-qps")
	fs.IntVar(&c.maxWatchers, "max-watches-per-user", 50, "watches and WebSockets each identity may hold open when tokens are on; 0 for no limit")
	fs.IntVar(&c.maxObjects, "max-objects-per-namespace", 500, "objects of each resource a participant may create in a namespace (403 beyond); 0 for no limit")
	fs.IntVar(&c.maxBytes, "max-object-bytes", 64<<10, "bytes an object may take (as stored) in the namespaces participants write (413 beyond; the instructor is not limited); 0 for no limit")
}

// validate checks --workshop and --public-url, on which join links and kubeconfigs are built.
func (c *accessConfig) validate() error {
	if c.workshop < 0 {
		return fmt.Errorf("--workshop %d: want a number of participants, 0 for none", c.workshop)
	}
	switch c.tls {
	case "on", "true", "off", "false", "auto", "":
	default:
		return fmt.Errorf("--tls %q: want on, off or auto", c.tls)
	}
	if c.publicURL == "" {
		return nil
	}
	u, err := url.Parse(c.publicURL)
	if err != nil {
		return fmt.Errorf("--public-url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" {
		return fmt.Errorf("--public-url %q: want http(s)://HOST[:PORT]", c.publicURL)
	}
	return nil
}

// access is the set-up of authentication and TLS for one server.
type access struct {
	auth *auth.Auth // nil: open, loopback only
	// tokens are every identity.
	tokens    []auth.Token
	tlsConfig *tls.Config
	caData    []byte // PEM, when the certificate is self-signed
	certFile  string
}

// setupAccess reads the token file, creates or loads the workshop identities, refuses an open
// server on a non-loopback address, and prepares TLS. addr is the address asked for, listening
// the one the listener got (its port chosen when addr's is 0).
func setupAccess(ctx context.Context, c accessConfig, addr, listening, dbPath string, st store.Interface, logger *slog.Logger) (*access, error) {
	a := &access{}
	if c.tokenFile != "" {
		f, err := os.Open(c.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		toks, err := auth.ParseTokenFile(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--token-file %s: %w", c.tokenFile, err)
		}
		a.tokens = append(a.tokens, toks...)
	}
	var (
		ws  []auth.Token
		err error
	)
	switch {
	case c.replay:
		// No identity from a recording: import refuses them, and this holds if one slipped by.
	case c.workshop > 0:
		ws, err = auth.EnsureWorkshop(ctx, st, c.workshop)
	default:
		// A database that ran a workshop keeps its identities: a restart never opens the room.
		ws, err = auth.LoadWorkshop(ctx, st)
	}
	if err != nil {
		return nil, err
	}
	a.tokens = append(a.tokens, ws...)

	if len(a.tokens) == 0 && !loopbackAddr(addr) {
		return nil, fmt.Errorf("refusing to serve on %s without authentication: anyone on the network could read and write every lease. "+
			"Enable tokens with --workshop N (participants, namespaces and join links) or --token-file FILE (CSV token,user,uid,\"group1,group2\"), "+
			"or listen on a loopback address such as --addr 127.0.0.1:8080", addr)
	}

	tlsOn := false
	switch strings.ToLower(c.tls) {
	case "on", "true":
		tlsOn = true
	case "off", "false":
		if c.tlsCertFile != "" {
			return nil, fmt.Errorf("--tls=off contradicts --tls-cert-file")
		}
	case "auto", "":
		// Whenever tokens are on, not only with --workshop: a restart without it still loads the
		// workshop's identities, and its join links and cookie must not travel in clear.
		tlsOn = len(a.tokens) > 0 || c.tlsCertFile != ""
	default:
		return nil, fmt.Errorf("--tls: %q is none of on, off, auto", c.tls)
	}
	if c.http2 && !tlsOn {
		return nil, errors.New("--http2: HTTP/2 is offered over TLS only (as kube-apiserver does); serve with --tls on")
	}
	if tlsOn {
		var cert tls.Certificate
		switch {
		case c.tlsCertFile != "" || c.tlsKeyFile != "":
			if c.tlsCertFile == "" || c.tlsKeyFile == "" {
				return nil, fmt.Errorf("--tls-cert-file and --tls-private-key-file go together")
			}
			cert, err = tls.LoadX509KeyPair(c.tlsCertFile, c.tlsKeyFile)
			if err != nil {
				return nil, fmt.Errorf("load TLS certificate: %w", err)
			}
			a.certFile = c.tlsCertFile
			certNamesHost(cert, c.publicURL, logger)
			// Kubeconfigs and the server's own clients trust the certificate file itself: a
			// certificate in the trust pool verifies even without its issuer.
			if a.caData, err = os.ReadFile(c.tlsCertFile); err != nil {
				return nil, fmt.Errorf("read TLS certificate: %w", err)
			}
		default:
			a.certFile, a.caData, cert, err = selfSignedCert(dbPath, addr, c.publicURL, logger)
			if err != nil {
				return nil, err
			}
		}
		// HTTP/1.1 unless --http2. A WebSocket needs an HTTP/1.1 connection it can take over,
		// which its clients ask for in ALPN whether or not h2 is offered.
		protos := []string{"http/1.1"}
		if c.http2 {
			protos = []string{"h2", "http/1.1"}
		}
		a.tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: protos}
	} else if len(a.tokens) > 0 && !loopbackAddr(addr) {
		logger.Warn("--tls=off: bearer tokens travel in clear over plain HTTP and anyone on the network can read them; leave --tls at auto or on")
	}

	if len(a.tokens) > 0 {
		a.auth = auth.New(logger, st, auth.Options{
			Tokens:                 a.tokens,
			RateQPS:                c.rateQPS,
			RateBurst:              c.rateBurst,
			MaxWatchers:            c.maxWatchers,
			MaxObjectsPerNamespace: c.maxObjects,
			MaxObjectBytes:         c.maxBytes,
			// Join links and kubeconfigs name the URL the server announces, never a request's
			// Host header, which whoever sends the request chooses.
			PublicURL: announcedURL(c.publicURL, a.scheme()+"://"+listening),
			CAData:    a.caData,
			Words:     web.AuthWords,
		})
	}
	return a, nil
}

// wrap serves TLS on ln when it is on.
func (a *access) wrap(ln net.Listener) net.Listener {
	if a.tlsConfig == nil {
		return ln
	}
	return tls.NewListener(ln, a.tlsConfig)
}

func (a *access) scheme() string {
	if a.tlsConfig != nil {
		return "https"
	}
	return "http"
}

// serverUser is the server's own identity for the namespaces it creates: one of its own
// (not limited), allowed everything.
var serverUser = auth.User{Name: "system:leaselab", Role: auth.RoleInstructor, Groups: []string{"system:masters"}}

// createNamespaces makes sure every participant's namespace and the arena exist, through the
// API itself in process (as the server's own identity) so that they are ordinary Namespace
// objects.
func (a *access) createNamespaces(ctx context.Context, transport *inprocess.Transport) error {
	if a.auth == nil {
		return nil
	}
	names := map[string]bool{}
	for _, t := range a.tokens {
		if t.User.Role == auth.RoleParticipant && t.User.Namespace != "" {
			names[t.User.Namespace] = true
		}
	}
	if len(names) == 0 {
		return nil
	}
	names[auth.ArenaNamespace] = true
	rt := transport.As(serverUser)
	for ns := range names {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+inprocess.Host+"/api/v1/namespaces", strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		// No User-Agent, as these namespaces have always been created: their managedFields
		// name no manager.
		req.Header["User-Agent"] = []string{""}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusConflict {
			return fmt.Errorf("create namespace %s: %d %s", ns, resp.StatusCode, strings.TrimSpace(string(b)))
		}
	}
	return nil
}

// printAccess tells the instructor how to get in.
func (a *access) printAccess(w io.Writer, url, db string) {
	n := 0
	for _, t := range a.tokens {
		if t.User.Role == auth.RoleParticipant {
			n++
		}
	}
	fmt.Fprintf(w, "  dashboard:  %s/ (browsers sign in with a join link from %s/workshop)\n", url, url)
	plural := "s"
	if n == 1 {
		plural = ""
	}
	fmt.Fprintf(w, "  tokens on:  %d participant%s; participants write in their own namespace and in %q\n", n, plural, auth.ArenaNamespace)
	if a.tlsConfig != nil && a.caData != nil {
		fmt.Fprintf(w, "  TLS:        certificate %s (kubeconfigs carry it)\n", a.certFile)
	}
	for _, t := range a.tokens {
		if t.User.Role == auth.RoleInstructor && t.User.Name == auth.InstructorName {
			fmt.Fprintf(w, "  instructor: open %s/join?token=%s then %s/workshop (join links, QR codes, kubeconfigs)\n", url, t.Token, url)
			// Without --server, the kubeconfig names the URL the server recorded: the public one.
			fmt.Fprintf(w, "  kubectl:    %s kubeconfig --db %s --token %s > instructor.kubeconfig\n", invokedName(), db, t.Token)
		}
	}
}

// loopbackAddr says whether a listen address only accepts connections from this machine.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
