package timings_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web"
	"github.com/leaselab/leaselab/web/api/front"
	"github.com/leaselab/leaselab/web/lease/timings"
	"github.com/leaselab/leaselab/web/webtest"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestWhatClientGoWrites runs client-go's real elector against a leaselab server and reads back
// the leaseDurationSeconds it wrote; a lease under a second is written as 0, which the server
// refuses with the calculator's reason.
func TestWhatClientGoWrites(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // after the server's own cleanup
	srv := webtest.Start(t, web.Config{Config: front.Config{Logger: logger, Store: db}})
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL, QPS: -1, UserAgent: "timings-test/v0"})

	for i, s := range []timings.Settings{
		{LeaseDuration: 2900 * time.Millisecond, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond},
		{LeaseDuration: 1500 * time.Millisecond, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond},
		{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second},
	} {
		v := timings.Check(s)
		if !v.OK() {
			t.Fatalf("%+v: %s", s, v.Refusal())
		}
		name := fmt.Sprintf("lease-%d", i)
		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: name},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: "timings-test"},
		}
		ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
		leading := make(chan struct{})
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: s.LeaseDuration, RenewDeadline: s.RenewDeadline, RetryPeriod: s.RetryPeriod,
			Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) { close(leading) }, OnStoppedLeading: func() {}},
			Name:      name,
		})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { defer close(done); le.Run(ctx) }()
		poll.Until(t, 10*time.Second, name+": the elector leads", func() (bool, string) {
			select {
			case <-leading:
				return true, ""
			default:
				return false, "not leading"
			}
		})
		l, err := client.CoordinationV1().Leases("default").Get(context.Background(), name, metav1.GetOptions{})
		cancel()
		<-done
		if err != nil {
			t.Fatal(err)
		}
		if got := *l.Spec.LeaseDurationSeconds; got != v.LeaseDurationSeconds {
			t.Errorf("%s: client-go wrote leaseDurationSeconds %d, the calculator says %d", s.LeaseDuration, got, v.LeaseDurationSeconds)
		}
	}

	// What client-go writes for 900 ms, and what the API server answers.
	v := timings.Check(timings.Settings{LeaseDuration: 900 * time.Millisecond, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 200 * time.Millisecond})
	if v.Refused != "" || v.LeaseDurationSeconds != 0 || v.APIServerRefuses == "" {
		t.Fatalf("900 ms: %+v", v)
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: "short"},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "timings-test"},
	}
	err = lock.Create(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "timings-test", LeaseDurationSeconds: int(v.LeaseDurationSeconds)})
	var status *apierrors.StatusError
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) || !strings.HasSuffix(err.Error(), ": "+v.APIServerRefuses) {
		t.Errorf("creating a lease of %d seconds: %v; want an Invalid error ending in %q", v.LeaseDurationSeconds, err, v.APIServerRefuses)
	}
}

// TestStandardLibraryOnly: the calculator is pure and small, so that any screen, the browser's
// included, may link it: the standard library and web/lease/said (its sentences; std lib only).
func TestStandardLibraryOnly(t *testing.T) {
	for _, env := range [][]string{nil, {"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
		cmd.Env = append(cmd.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v go list: %v", env, err)
		}
		if deps, want := strings.Fields(string(out)), []string{"github.com/leaselab/leaselab/wasm/said", "github.com/leaselab/leaselab/web/lease/timings"}; !slices.Equal(deps, want) {
			t.Errorf("%v: web/lease/timings reaches %q beyond the standard library and web/lease/said", env, deps)
		}
	}
}
