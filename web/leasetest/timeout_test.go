package leasetest

import (
	"bytes"
	"context"
	"flag"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// TestTimeoutLogsNothing: a client whose rest.Config.Timeout passes while a fault holds its
// request gets the timeout, and client-go logs no "unable to cancel request".
func TestTimeoutLogsNothing(t *testing.T) {
	var logs bytes.Buffer
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	klog.SetOutput(&logs)
	defer func() {
		klog.SetOutput(nil)
		_ = fs.Set("logtostderr", "true")
	}()

	synctest.Test(t, func(t *testing.T) {
		srv := Start(t)
		srv.Hang("slow")
		cfg := srv.ConfigFor("slow")
		cfg.Timeout = 50 * time.Millisecond
		_, err := kubernetes.NewForConfigOrDie(cfg).CoordinationV1().Leases("default").List(context.Background(), metav1.ListOptions{})
		if err == nil {
			t.Fatal("a hung request returned no error")
		}
		synctest.Wait() // the timeout's cancellation, which logs, runs beside the failed call
	})
	klog.Flush()
	if bytes.Contains(logs.Bytes(), []byte("unable to cancel request")) {
		t.Errorf("client-go logged: %s", logs.String())
	}
}
