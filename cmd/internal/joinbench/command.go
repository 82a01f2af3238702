package joinbench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/leaselab/leaselab/cmd/internal/benchserver"
	"github.com/leaselab/leaselab/cmd/internal/chromium"
)

// Summary is the command's line in the help.
const Summary = "measure what a phone waits for from opening a lease's join link until its tab is a candidate, in headless Chromium on an emulated network"

// Command is `leaselab bench join` as its flags set it.
type Command struct {
	cfg    Config
	server string
	tls    bool
	json   bool
}

// Flags defines the command's flags on fs.
func Flags(fs *flag.FlagSet) *Command {
	c := &Command{}
	fs.StringVar(&c.server, "server", "", "URL of a leaselab that serves without workshop mode (default: start one on a fresh database)")
	fs.BoolVar(&c.tls, "tls", true, "serve the server it starts over HTTPS, as a workshop's is (browsers take the Brotli candidate, a quarter smaller, over HTTPS and from loopback only; the Chromium it runs accepts the self-signed certificate)")
	fs.StringVar(&c.cfg.Namespace, "namespace", "default", "namespace of the lease the join link names")
	fs.StringVar(&c.cfg.Lease, "lease", "phones", "lease the join link names")
	fs.IntVar(&c.cfg.Runs, "runs", 5, "phones that join, one after another, each in a fresh browser context")
	fs.StringVar(&c.cfg.Network, "network", "fast3g", "network to emulate: "+strings.Join(NetworkNames(), ", ")+" (DevTools' presets Fast 3G and Slow 3G)")
	fs.StringVar(&c.cfg.AcceptEncoding, "accept-encoding", "", "the Accept-Encoding of the page's requests (default: Chromium's own); gzip, deflate is a browser that takes no Brotli, as on plain HTTP off loopback")
	fs.StringVar(&c.cfg.Chromium, "chromium", "", "path of the Chromium to run (default: the first of "+strings.Join(chromium.Names, ", ")+" on PATH)")
	fs.DurationVar(&c.cfg.Timeout, "timeout", 2*time.Minute, "how long one phone may take to become a candidate")
	fs.BoolVar(&c.json, "json", false, "print the result as JSON")
	return c
}

// Run starts a server unless --server names one, measures, and prints the report to stdout,
// the progress to stderr.
func (c *Command) Run(ctx context.Context, stdout, stderr io.Writer) error {
	if _, err := lookupNetwork(c.cfg.Network); err != nil {
		return err
	}
	if c.cfg.Runs < 1 {
		return fmt.Errorf("--runs %d: want at least 1", c.cfg.Runs)
	}
	c.cfg.Progress = stderr
	if c.cfg.URL = strings.TrimSuffix(c.server, "/"); c.cfg.URL == "" {
		tls := map[bool]string{true: "on", false: "off"}[c.tls]
		fmt.Fprintf(stderr, "starting leaselab serve --tls %s\n", tls)
		srv, err := benchserver.StartServe(ctx, stderr, "--tls", tls)
		if err != nil {
			return err
		}
		defer srv.Stop()
		c.cfg.URL = srv.URL
	}
	fmt.Fprintf(stderr, "%d phones open %s%s over %s\n", c.cfg.Runs, c.cfg.URL, JoinPath(c.cfg.Namespace, c.cfg.Lease), c.cfg.Network)
	rep, err := Measure(ctx, c.cfg)
	if err != nil {
		return err
	}
	if c.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	_, err = rep.WriteTo(stdout)
	return err
}
