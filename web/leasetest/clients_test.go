package leasetest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/leaselab/leaselab/web/leasetest"
)

var leasesResource = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// TestClientsInBubble: in a bubble, a dynamic client writes and a typed client's informer
// (list, then watch) sees every write, and a field selector narrows a list.
func TestClientsInBubble(t *testing.T) {
	defer measure(t)()
	synctest.Test(t, func(t *testing.T) {
		srv := leasetest.Start(t)
		typed := kubernetes.NewForConfigOrDie(srv.Config())
		dyn := dynamic.NewForConfigOrDie(srv.ConfigFor("dynamic")).Resource(leasesResource).Namespace("default")

		factory := informers.NewSharedInformerFactoryWithOptions(typed, 0, informers.WithNamespace("default"))
		leases := factory.Coordination().V1().Leases()
		seen := make(chan string, 10)
		if _, err := leases.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { seen <- "add " + holder(obj) },
			UpdateFunc: func(_, obj any) { seen <- "update " + holder(obj) },
		}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		factory.Start(ctx.Done())
		defer factory.Shutdown() // after cancel: Shutdown waits for the informers to stop
		defer cancel()
		factory.WaitForCacheSync(ctx.Done())

		for _, name := range []string{"one", "two"} {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
				"metadata": map[string]any{"name": name},
				"spec":     map[string]any{"holderIdentity": "a", "leaseDurationSeconds": int64(15)},
			}}
			if _, err := dyn.Create(t.Context(), u, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		l, err := dyn.Get(t.Context(), "one", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		unstructured.SetNestedField(l.Object, "b", "spec", "holderIdentity")
		if _, err := dyn.Update(t.Context(), l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"add a", "add a", "update b"} {
			if got := <-seen; got != want {
				t.Errorf("informer saw %q, want %q", got, want)
			}
		}
		list, err := typed.CoordinationV1().Leases("default").List(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=two"})
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != "two" {
			t.Errorf("list by field selector: %v, %v", list, err)
		}
	})
}

// TestListener: WithListener serves the same server over HTTP on 127.0.0.1.
func TestListener(t *testing.T) {
	srv := leasetest.Start(t, leasetest.WithListener())
	if srv.URL() == "" {
		t.Fatal("no URL")
	}
	typed := kubernetes.NewForConfigOrDie(srv.Config())
	if _, err := typed.CoordinationV1().Leases("default").Create(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	overHTTP := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL()}).CoordinationV1().Leases("default")
	if l, err := overHTTP.Get(t.Context(), "l", metav1.GetOptions{}); err != nil || l.Name != "l" {
		t.Errorf("get over HTTP: %v", err)
	}
	srv.FailWrites(1, http.StatusTooManyRequests)
	if _, err := overHTTP.Create(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "m"}}, metav1.CreateOptions{}); !apierrors.IsTooManyRequests(err) {
		t.Errorf("create over HTTP while writes fail: %v, want 429", err)
	}
}

func holder(obj any) string {
	if l, ok := obj.(*coordinationv1.Lease); ok && l.Spec.HolderIdentity != nil {
		return *l.Spec.HolderIdentity
	}
	return ""
}

// TestNamespacesAsOnACluster: a create in a namespace that does not exist is 404, as on
// kube-apiserver, unless the test asks for leaselab's implicit namespaces.
func TestNamespacesAsOnACluster(t *testing.T) {
	ctx := context.Background()
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	strict := kubernetes.NewForConfigOrDie(leasetest.Start(t).Config()).CoordinationV1()
	if _, err := strict.Leases("nowhere").Create(ctx, l, metav1.CreateOptions{}); !apierrors.IsNotFound(err) || err.Error() != `namespaces "nowhere" not found` {
		t.Fatalf("create in a missing namespace: %v, want NotFound namespaces \"nowhere\" not found", err)
	}
	for _, ns := range []string{"default", "kube-system"} {
		if _, err := strict.Leases(ns).Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create in %s: %v", ns, err)
		}
	}
	implicit := kubernetes.NewForConfigOrDie(leasetest.Start(t, leasetest.WithImplicitNamespaces()).Config()).CoordinationV1()
	if _, err := implicit.Leases("nowhere").Create(ctx, l, metav1.CreateOptions{}); err != nil {
		t.Fatalf("with implicit namespaces: %v", err)
	}
}

// TestHandleErrorInBubble: an error handled by apimachinery inside a bubble (a candidate's
// worker meeting a conflict, say) does not sleep for the years between the real clock and the
// bubble's.
func TestHandleErrorInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leasetest.Start(t)
		start := time.Now()
		utilruntime.HandleError(errors.New("a handled error"))
		utilruntime.HandleError(errors.New("another"))
		if d := time.Since(start); d > time.Second {
			t.Fatalf("handling two errors took %s of fake time", d)
		}
	})
}
