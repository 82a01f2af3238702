package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/cmd/internal/bench"
)

const benchSummary = "generate lease load against leaselab or any Kubernetes API server and report throughput and latency"

// benchFlags is what the flags of `leaselab bench` set: the run's configuration, and what this
// command does around the run.
type benchFlags struct {
	bench.Config
	jsonOut    bool
	cpuProfile string
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if rest, ok := isWorkshopBench(args); ok {
		return runBenchWorkshop(ctx, rest, stdout, stderr)
	}
	if rest, ok := benchWorkload(args, "room"); ok {
		return runBenchRoom(ctx, rest, stdout, stderr)
	}
	if rest, ok := benchWorkload(args, "join"); ok {
		return runBenchJoin(ctx, rest, stdout, stderr)
	}
	c, err := parseBenchFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.cpuProfile != "" {
		stop, err := startCPUProfile(c.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	rep, err := bench.Run(ctx, c.Config, stderr)
	if err != nil {
		return err
	}
	if c.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		_, err = rep.WriteTo(stdout)
	}
	// Some failures under load are part of the measurement; a run in which nothing succeeded
	// measured nothing.
	if err == nil && rep.Ops == 0 && rep.Errors > 0 {
		err = fmt.Errorf("every operation failed; the first: %s", rep.FirstError)
	}
	return err
}

// parseBenchFlags parses the command line of `leaselab bench` and finds the server to load.
// Bad flags and a missing or unknown workload return errUsage after the usage is printed.
func parseBenchFlags(args []string, stderr io.Writer) (benchFlags, error) {
	var c benchFlags
	var kubeconfig, server string
	workloads := bench.Workloads()
	fs := newFlagSet("bench", benchSummary, " "+strings.Join(workloads, "|")+
		"\n       leaselab bench workshop [flags] (see leaselab bench workshop --help)"+
		"\n       leaselab bench room --candidates N [flags] (see leaselab bench room --help)"+
		"\n       leaselab bench join [flags] (see leaselab bench join --help)", stderr)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to load (default: $KUBECONFIG when set and --server is not given, else --server)")
	fs.StringVar(&server, "server", "http://127.0.0.1:8080", "URL of the API server; with a kubeconfig, overrides the server it names")
	c.register(fs)
	var err error
	if c.Workload, err = parseFlagsWord(fs, args); err != nil {
		return c, err
	}
	switch {
	case c.Workload == "":
		fmt.Fprintf(stderr, "leaselab bench: name a workload: %s\n", orList(workloads))
		fs.Usage()
		return c, errUsage
	case !slices.Contains(workloads, c.Workload):
		fmt.Fprintf(stderr, "leaselab bench: unknown workload %q: name one of %s\n", c.Workload, orList(workloads))
		fs.Usage()
		return c, errUsage
	case c.Clients < 1:
		return c, errors.New("--clients must be at least 1")
	case c.WebSocketShare < 0 || c.WebSocketShare > 1:
		return c, fmt.Errorf("--websocket-share %v: want a share between 0 and 1", c.WebSocketShare)
	}
	if c.Rest, _, c.KeepTransport, err = clientConfig(kubeconfig, server, flagGiven(fs, "server")); err != nil {
		return c, err
	}
	c.UserAgent = "leaselab-bench/" + leaselabVersion()
	return c, nil
}

// register defines the flags of the run and of its output, but for the server's, which need
// resolving.
func (c *benchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.Namespace, "namespace", "leaselab-bench", "namespace the benchmark writes its leases in")
	fs.IntVar(&c.Clients, "clients", 64, "concurrent clients (renew, contend, heartbeat senders)")
	durationVar(fs, &c.Duration, "duration", 30*time.Second, "how long the load runs")
	fs.Float64Var(&c.Rate, "rate", 0, "renew: total renewals per second to aim for (0: as fast as possible); watch: writes per second, 100 when 0")
	fs.IntVar(&c.Leases, "leases", 10000, "heartbeat: number of leases, each renewed every --interval")
	durationVar(fs, &c.Interval, "interval", 10*time.Second, "heartbeat: renewal interval of each lease")
	fs.IntVar(&c.Watchers, "watchers", 1000, "watch: number of watchers")
	fs.Float64Var(&c.WebSocketShare, "websocket-share", 0.5, "watch: share of watchers that use a WebSocket instead of chunked HTTP")
	fs.StringVar(&c.DB, "db", "", "database file of a local leaselab, to report its size")
	fs.BoolVar(&c.jsonOut, "json", false, "print the result as JSON")
	durationVar(fs, &c.Progress, "progress", time.Second, "interval of the progress line on stderr (0: none)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the load generator to this file")
	fs.BoolVar(&c.ClientGo, "client-go", false, "renew, watch: measure with client-go's typed clientset and its defaults (an own clientset per renew client, one shared by the watchers, all over chunked HTTP) instead of the lean client")
}

// orList joins names as a sentence does: "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// startCPUProfile profiles this process into path until the returned function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
