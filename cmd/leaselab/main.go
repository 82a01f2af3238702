// Command leaselab is a Kubernetes lease playground: one binary that serves the
// coordination.k8s.io API on the real REST paths, keeps every change in SQLite, and shows leader
// election live in the browser.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "serve the API, the dashboard and the browser candidates", runServe},
		{"bench", benchSummary, runBench},
		{"candidate", "run a leader-election candidate (client-go) for a lease", runCandidate},
		{"kubeconfig", "print a kubeconfig for this server (for kubectl --kubeconfig)", runKubeconfig},
		{"backup", "write a consistent copy of the database (leaselab backup PATH), also while the server runs", runBackup},
		{"export", exportSummary, runExport},
		{"replay", replaySummary, runReplay},
		{"timings", timingsSummary, runTimings},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 2 && args[0] == "help":
		// "leaselab help serve" is "leaselab serve --help".
		args = []string{args[1], "--help"}
	case len(args) == 1 && (args[0] == "--version" || args[0] == "-v"):
		args = []string{"version"}
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			errOut := stderr
			if helpAsked(args[1:]) {
				// Help that was asked for is the command's output (`serve --help | less`); the
				// flag set prints its usage to the error stream it is given.
				errOut = stdout
			}
			err := c.run(ctx, args[1:], stdout, errOut)
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.Is(err, errUsage):
				return 2
			default:
				fmt.Fprintf(stderr, "leaselab %s: %v\n", c.name, err)
				return 1
			}
		}
	}
	fmt.Fprintf(stderr, "leaselab: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// errUsage reports bad flags; the flag package has already printed why.
var errUsage = errors.New("usage")

func usage(w io.Writer) {
	fmt.Fprintln(w, "leaselab: a Kubernetes lease playground")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: leaselab <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "leaselab <command> --help" for the flags of a command.`)
}

// newFlagSet returns a flag set whose --help prints a summary, usage and every flag with
// its LEASELAB_* environment variable.
func newFlagSet(name, summary, args string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("leaselab "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			fmt.Fprintf(stderr, "leaselab %s: %s\n\nUsage: leaselab %s%s\n", name, summary, name, args)
			return
		}
		fmt.Fprintf(stderr, "leaselab %s: %s\n\nUsage: leaselab %s [flags]%s\n\nFlags:\n", name, summary, name, args)
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nEvery flag can also be set with the environment variable LEASELAB_<FLAG> (upper case, - as _).")
	}
	return fs
}

// helpAsked says whether a command's arguments ask for its help (-h, -help or --help before
// any "--").
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}

// parseFlags parses args, taking defaults from LEASELAB_* environment variables first.
func parseFlags(fs *flag.FlagSet, args []string) error {
	word, err := parseFlagsWord(fs, args)
	if err == nil && word != "" {
		err = unexpectedArgs(fs, []string{word})
	}
	return err
}

// parseFlagsWord parses args that hold the flags and at most one word (a workload, a path),
// which may come before, between or after them: "bench renew --clients 8" and
// "bench --clients 8 renew" mean the same. LEASELAB_* environment variables set the defaults.
func parseFlagsWord(fs *flag.FlagSet, args []string) (word string, err error) {
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := "LEASELAB_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if err := f.Value.Set(v); err != nil && envErr == nil {
				envErr = fmt.Errorf("%s=%q: %w", env, v, err)
			}
			f.DefValue = v
		}
	})
	if envErr != nil {
		return "", envErr
	}
	parse := func(args []string) error {
		if !helpAsked(args) {
			// A mistake gets its one line and where to read more, not every flag.
			full := fs.Usage
			fs.Usage = func() { seeHelp(fs) }
			defer func() { fs.Usage = full }()
		}
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return errUsage
		}
		return nil
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		word, args = args[0], args[1:]
	}
	if err := parse(args); err != nil {
		return "", err
	}
	if word == "" && fs.NArg() > 0 {
		// The flag parser stops at the first word; the flags after it are parsed too.
		word = fs.Arg(0)
		if err := parse(fs.Args()[1:]); err != nil {
			return "", err
		}
	}
	if fs.NArg() > 0 {
		return "", unexpectedArgs(fs, fs.Args())
	}
	return word, nil
}

// flagGiven says whether a flag was set on the command line or through its LEASELAB_*
// environment variable, rather than left at its default.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	_, env := os.LookupEnv("LEASELAB_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
	return given || env
}

func unexpectedArgs(fs *flag.FlagSet, args []string) error {
	fmt.Fprintf(fs.Output(), "unexpected arguments: %s\n", strings.Join(args, " "))
	seeHelp(fs)
	return errUsage
}

// seeHelp says where a command's flags are listed.
func seeHelp(fs *flag.FlagSet) {
	fmt.Fprintf(fs.Output(), "Run '%s --help' for its flags.\n", fs.Name())
}
