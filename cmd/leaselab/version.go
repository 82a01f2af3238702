package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"

	k8sversion "k8s.io/apimachinery/pkg/version"
)

// version is stamped at build time with -ldflags "-X main.version=..."; builds without it fall
// back to the module version from the build info.
var version = ""

func leaselabVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// serverVersion is what /version reports: the Kubernetes API level leaselab serves, with
// leaselab's own version in gitVersion's build metadata.
func serverVersion() k8sversion.Info {
	return k8sversion.Info{
		Major:                 "1",
		Minor:                 "36",
		EmulationMajor:        "1",
		EmulationMinor:        "36",
		MinCompatibilityMajor: "1",
		MinCompatibilityMinor: "35",
		GitVersion:            "v1.36.3+leaselab-" + leaselabVersion(),
		GitCommit:             leaselabVersion(),
		GitTreeState:          "clean",
		GoVersion:             runtime.Version(),
		Compiler:              runtime.Compiler,
		Platform:              runtime.GOOS + "/" + runtime.GOARCH,
	}
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "print the version", "", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v := serverVersion()
	fmt.Fprintf(stdout, "leaselab %s (serves Kubernetes API v%s.%s, %s %s)\n", leaselabVersion(), v.Major, v.Minor, v.GoVersion, v.Platform)
	return nil
}

// invokedName is how to run this binary again in the printed hints: the path it was started by
// when that is not what PATH finds (bin/leaselab after make build), else plain "leaselab".
func invokedName() string {
	arg := os.Args[0]
	if filepath.Base(arg) != "leaselab" {
		return "leaselab"
	}
	if found, err := exec.LookPath("leaselab"); err == nil {
		if a, err := filepath.Abs(arg); err == nil && sameFile(a, found) {
			return "leaselab"
		}
	}
	return arg
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
