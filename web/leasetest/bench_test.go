package leasetest_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/leaselab/leaselab/web/leasetest"
)

// BenchmarkStart: starting a server, one write, and stopping it.
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		srv := leasetest.Start(b)
		client := kubernetes.NewForConfigOrDie(srv.Config())
		if _, err := client.CoordinationV1().Leases("default").List(b.Context(), metav1.ListOptions{}); err != nil {
			b.Fatal(err)
		}
		srv.Close()
	}
}
