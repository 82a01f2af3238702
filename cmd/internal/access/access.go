// Package access decides who may reach `leaselab serve` and how: bearer tokens (a token file,
// the workshop's identities kept in the database), the refusal to serve an open server off
// loopback, TLS (a certificate of one's own, or the self-signed one of cmd/internal/tlscert),
// the limits that keep a shared room alive, the URL the server announces for its join links
// and kubeconfigs, and the participants' namespaces. Its flags are serve's (Config.Register).
package access

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

	"github.com/leaselab/leaselab/cmd/internal/tlscert"
	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/api/inprocess"
)

// Config is who may reach `leaselab serve` and how: tokens, the workshop, TLS and the limits
// that keep a shared room alive.
type Config struct {
	TokenFile   string
	Workshop    int
	TLS         string
	TLSCertFile string
	TLSKeyFile  string
	HTTP2       bool
	PublicURL   string
	RateQPS     float64
	RateBurst   int
	MaxWatchers int
	MaxObjects  int
	MaxBytes    int

	// Replay: the database was built from a file anyone may have written, which never decides
	// who may reach the server: workshop identities in it are not loaded.
	Replay bool
}

// Register defines the flags of c on fs.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.TokenFile, "token-file", "", `static bearer tokens, as kube-apiserver's --token-file: CSV lines token,user,uid,"group1,group2"; users in group leaselab:instructors or system:masters are instructors, others participants writing in the namespace named as them and in "arena"`)
	fs.IntVar(&c.Workshop, "workshop", 0, "workshop mode: create N participants (and an instructor) with tokens and namespaces, kept in the database; the instructor's page is /workshop")
	fs.StringVar(&c.TLS, "tls", "auto", "serve HTTPS: on, off, or auto (on whenever tokens are on: --workshop, --token-file or a database that ran a workshop; and with --tls-cert-file)")
	fs.StringVar(&c.TLSCertFile, "tls-cert-file", "", "PEM certificate (chain) for HTTPS; without it a self-signed certificate is generated beside the database")
	fs.StringVar(&c.TLSKeyFile, "tls-private-key-file", "", "PEM private key of --tls-cert-file")
	fs.BoolVar(&c.HTTP2, "http2", false, "offer HTTP/2 over TLS as kube-apiserver does, so that client-go puts its requests and watches on one connection; off: HTTP/1.1, which costs Go's server a quarter to a third less CPU per request (BENCHMARKS.md). WebSockets use HTTP/1.1 either way")
	fs.StringVar(&c.PublicURL, "public-url", "", "URL participants reach this server at, for join links and kubeconfigs (default: the address it listens at, a wildcard one named by this machine's host name)")
	fs.Float64Var(&c.RateQPS, "rate-limit-qps", 20, "requests per second each identity may make when tokens are on (429 beyond); 0 for no limit")
	fs.IntVar(&c.RateBurst, "rate-limit-burst", 100, "burst of requests each identity may make above --rate-limit-qps")
	fs.IntVar(&c.MaxWatchers, "max-watches-per-user", 50, "watches and WebSockets each identity may hold open when tokens are on; 0 for no limit")
	fs.IntVar(&c.MaxObjects, "max-objects-per-namespace", 500, "objects of each resource a participant may create in a namespace (403 beyond); 0 for no limit")
	fs.IntVar(&c.MaxBytes, "max-object-bytes", 64<<10, "bytes an object may take (as stored) in the namespaces participants write (413 beyond; the instructor is not limited); 0 for no limit")
}

// Validate checks --workshop, --tls and --public-url, on which join links and kubeconfigs are
// built, without reading any file.
func (c *Config) Validate() error {
	if c.Workshop < 0 {
		return fmt.Errorf("--workshop %d: want a number of participants, 0 for none", c.Workshop)
	}
	switch c.TLS {
	case "on", "true", "off", "false", "auto", "":
	default:
		return fmt.Errorf("--tls %q: want on, off or auto", c.TLS)
	}
	if c.PublicURL == "" {
		return nil
	}
	u, err := url.Parse(c.PublicURL)
	if err != nil {
		return fmt.Errorf("--public-url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" {
		return fmt.Errorf("--public-url %q: want http(s)://HOST[:PORT]", c.PublicURL)
	}
	return nil
}

// Gate is who may pass into one server (its authentication and tokens) and how they come in
// (TLS).
type Gate struct {
	// Auth authenticates, authorizes and limits every request; nil: open, loopback only.
	Auth *auth.Auth
	// Tokens are every identity.
	Tokens    []auth.Token
	TLSConfig *tls.Config // nil: plain HTTP
	CAData    []byte      // PEM, when the certificate is self-signed or of one's own
	CertFile  string
}

// New reads the token file, creates or loads the workshop identities, refuses an open server
// on a non-loopback address, and prepares TLS. addr is the address asked for, listening the
// one the listener got (its port chosen when addr's is 0). It returns the error of the first
// step that fails, worded with the flag at fault.
func New(ctx context.Context, c Config, addr, listening, dbPath string, st store.Interface, logger *slog.Logger) (*Gate, error) {
	toks, err := tokens(ctx, c, st)
	if err != nil {
		return nil, err
	}
	g := &Gate{Tokens: toks}
	if len(g.Tokens) == 0 && !loopbackAddr(addr) {
		return nil, fmt.Errorf("refusing to serve on %s without authentication: anyone on the network could read and write every lease. "+
			"Enable tokens with --workshop N (participants, namespaces and join links) or --token-file FILE (CSV token,user,uid,\"group1,group2\"), "+
			"or listen on a loopback address such as --addr 127.0.0.1:8080", addr)
	}
	tlsOn, err := c.tlsOn(len(g.Tokens) > 0)
	if err != nil {
		return nil, err
	}
	if tlsOn {
		if err := g.loadTLS(c, addr, dbPath, logger); err != nil {
			return nil, err
		}
	} else if len(g.Tokens) > 0 && !loopbackAddr(addr) {
		logger.Warn("--tls=off: bearer tokens travel in clear over plain HTTP and anyone on the network can read them; leave --tls at auto or on")
	}
	if len(g.Tokens) > 0 {
		g.Auth = auth.New(logger, st, auth.Options{
			Tokens:                 g.Tokens,
			RateQPS:                c.RateQPS,
			RateBurst:              c.RateBurst,
			MaxWatchers:            c.MaxWatchers,
			MaxObjectsPerNamespace: c.MaxObjects,
			MaxObjectBytes:         c.MaxBytes,
			// Join links and kubeconfigs name the URL the server announces, never a request's
			// Host header, which whoever sends the request chooses.
			PublicURL: AnnouncedURL(c.PublicURL, g.Scheme()+"://"+listening),
			CAData:    g.CAData,
			Words:     web.AuthWords,
		})
	}
	return g, nil
}

// tokens are the identities of the token file and of the workshop kept in st.
func tokens(ctx context.Context, c Config, st store.Interface) ([]auth.Token, error) {
	var toks []auth.Token
	if c.TokenFile != "" {
		f, err := os.Open(c.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		toks, err = auth.ParseTokenFile(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--token-file %s: %w", c.TokenFile, err)
		}
	}
	var (
		ws  []auth.Token
		err error
	)
	switch {
	case c.Replay:
		// No identity from a recording: import refuses them, and this holds if one slipped by.
	case c.Workshop > 0:
		ws, err = auth.EnsureWorkshop(ctx, st, c.Workshop)
	default:
		// A database that ran a workshop keeps its identities: a restart never opens the room.
		ws, err = auth.LoadWorkshop(ctx, st)
	}
	if err != nil {
		return nil, err
	}
	return append(toks, ws...), nil
}

// tlsOn says whether the server serves HTTPS, tokens telling whether any identity exists.
func (c Config) tlsOn(tokens bool) (bool, error) {
	tlsOn := false
	switch strings.ToLower(c.TLS) {
	case "on", "true":
		tlsOn = true
	case "off", "false":
		if c.TLSCertFile != "" {
			return false, fmt.Errorf("--tls=off contradicts --tls-cert-file")
		}
	case "auto", "":
		// Whenever tokens are on, not only with --workshop: a restart without it still loads the
		// workshop's identities, and its join links and cookie must not travel in clear.
		tlsOn = tokens || c.TLSCertFile != ""
	default:
		return false, fmt.Errorf("--tls: %q is none of on, off, auto", c.TLS)
	}
	if c.HTTP2 && !tlsOn {
		return false, errors.New("--http2: HTTP/2 is offered over TLS only (as kube-apiserver does); serve with --tls on")
	}
	return tlsOn, nil
}

// loadTLS loads the certificate of --tls-cert-file, or the self-signed one of the database,
// and makes the TLS configuration.
func (g *Gate) loadTLS(c Config, addr, dbPath string, logger *slog.Logger) error {
	var (
		cert tls.Certificate
		err  error
	)
	switch {
	case c.TLSCertFile != "" || c.TLSKeyFile != "":
		if c.TLSCertFile == "" || c.TLSKeyFile == "" {
			return fmt.Errorf("--tls-cert-file and --tls-private-key-file go together")
		}
		cert, err = tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
		if err != nil {
			return fmt.Errorf("load TLS certificate: %w", err)
		}
		g.CertFile = c.TLSCertFile
		tlscert.WarnUnnamedHost(cert, c.PublicURL, logger)
		// Kubeconfigs and the server's own clients trust the certificate file itself: a
		// certificate in the trust pool verifies even without its issuer.
		if g.CAData, err = os.ReadFile(c.TLSCertFile); err != nil {
			return fmt.Errorf("read TLS certificate: %w", err)
		}
	default:
		g.CertFile, g.CAData, cert, err = tlscert.SelfSigned(dbPath, addr, c.PublicURL, logger)
		if err != nil {
			return err
		}
	}
	// HTTP/1.1 unless --http2. A WebSocket needs an HTTP/1.1 connection it can take over,
	// which its clients ask for in ALPN whether or not h2 is offered.
	protos := []string{"http/1.1"}
	if c.HTTP2 {
		protos = []string{"h2", "http/1.1"}
	}
	g.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: protos}
	return nil
}

// Wrap serves TLS on ln when it is on.
func (g *Gate) Wrap(ln net.Listener) net.Listener {
	if g.TLSConfig == nil {
		return ln
	}
	return tls.NewListener(ln, g.TLSConfig)
}

// Scheme is the scheme of the server's URL: https with TLS, else http.
func (g *Gate) Scheme() string {
	if g.TLSConfig != nil {
		return "https"
	}
	return "http"
}

// serverUser is the server's own identity for the namespaces it creates: one of its own
// (not limited), allowed everything.
var serverUser = auth.User{Name: "system:leaselab", Role: auth.RoleInstructor, Groups: []string{"system:masters"}}

// CreateNamespaces makes sure every participant's namespace and the arena exist, through the
// API itself in process (as the server's own identity) so that they are ordinary Namespace
// objects. It returns the first creation that failed, other than for an existing namespace.
func (g *Gate) CreateNamespaces(ctx context.Context, transport *inprocess.Transport) error {
	if g.Auth == nil {
		return nil
	}
	names := map[string]bool{}
	for _, t := range g.Tokens {
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

// Print tells the instructor how to get in: the start banner's lines about tokens, TLS and
// the instructor's join link. invoked is how to run leaselab again in the printed commands.
func (g *Gate) Print(w io.Writer, url, db, invoked string) {
	n := 0
	for _, t := range g.Tokens {
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
	if g.TLSConfig != nil && g.CAData != nil {
		fmt.Fprintf(w, "  TLS:        certificate %s (kubeconfigs carry it)\n", g.CertFile)
	}
	for _, t := range g.Tokens {
		if t.User.Role == auth.RoleInstructor && t.User.Name == auth.InstructorName {
			fmt.Fprintf(w, "  instructor: open %s/join?token=%s then %s/workshop (join links, QR codes, kubeconfigs)\n", url, t.Token, url)
			// Without --server, the kubeconfig names the URL the server recorded: the public one.
			fmt.Fprintf(w, "  kubectl:    %s kubeconfig --db %s --token %s > instructor.kubeconfig\n", invoked, db, t.Token)
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

// URLPath is where a server records the URL it announced, beside its database, so that
// `leaselab kubeconfig --db` and `leaselab bench workshop --db` name the same server as the
// instructor page's kubeconfigs.
func URLPath(dbPath string) string { return dbPath + ".url" }

// AnnouncedURL is the URL clients are told to use: the public URL, else the listen URL, with a
// wildcard address replaced by this machine's name, which the self-signed certificate names.
func AnnouncedURL(publicURL, listenURL string) string {
	if publicURL != "" {
		return strings.TrimRight(publicURL, "/")
	}
	u, err := url.Parse(listenURL)
	if err != nil {
		return listenURL
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		if name, err := os.Hostname(); err == nil && name != "" {
			u.Host = net.JoinHostPort(name, u.Port())
		}
	}
	return u.String()
}
