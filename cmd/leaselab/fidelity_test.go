package main

import (
	"io"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestImplicitNamespacesFlag: `serve --implicit-namespaces=false` answers a create in a missing
// namespace as kube-apiserver does, to client-go too; the default creates it.
func TestImplicitNamespacesFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--implicit-namespaces=false"}, true}, {[]string{"--implicit-namespaces"}, false}} {
		var cfg serveConfig
		fs := newFlagSet("serve", "", "", io.Discard)
		cfg.register(fs)
		if err := parseFlags(fs, tc.args); err != nil || cfg.noImplicitNamespaces != tc.want {
			t.Errorf("%q: noImplicitNamespaces %v (err %v), want %v", tc.args, cfg.noImplicitNamespaces, err, tc.want)
		}
	}

	ts := mustStartServerWith(t, "", func(c *serveConfig) { c.noImplicitNamespaces = true })
	ctx := ctxT(t, 20*time.Second)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}}
	_, err := ts.Client.CoordinationV1().Leases("nowhere").Create(ctx, lease, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `namespaces "nowhere" not found` {
		t.Fatalf("create in a missing namespace: %v, want the real server's 404", err)
	}
	if _, err := ts.Client.CoordinationV1().Leases("kube-system").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create in kube-system: %v", err)
	}

	implicit := mustStartServer(t, "")
	if _, err := implicit.Client.CoordinationV1().Leases("nowhere").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create in a new namespace by default: %v", err)
	}
}

// TestFinalizersClientGo: the finalizer lifecycle as a controller sees it through client-go:
// Delete succeeds and keeps the object, marked; the update that takes the last finalizer away
// removes it; the watch sees MODIFIED, MODIFIED, DELETED.
func TestFinalizersClientGo(t *testing.T) {
	t.Parallel()
	ts := mustStartServer(t, "")
	ctx := ctxT(t, 20*time.Second)
	leases := ts.Client.CoordinationV1().Leases("default")
	created, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name: "guarded", Finalizers: []string{"example.com/keep", "example.com/also"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := leases.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion, FieldSelector: "metadata.name=guarded"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if err := leases.Delete(ctx, "guarded", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	got, err := leases.Get(ctx, "guarded", metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp == nil || got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 0 {
		t.Fatalf("after delete: %+v, %v", got, err)
	}
	got.Finalizers = []string{"example.com/keep"}
	if got, err = leases.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("remove one finalizer: %v", err)
	}
	got.Finalizers = append(got.Finalizers, "example.com/new")
	if _, err := leases.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("add a finalizer while deleting: %v, want 422", err)
	}
	got.Finalizers = nil
	if _, err := leases.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("remove the last finalizer: %v", err)
	}
	if _, err := leases.Get(ctx, "guarded", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after the last finalizer: %v, want 404", err)
	}
	for _, want := range []watch.EventType{watch.Modified, watch.Modified, watch.Deleted} {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != want {
				t.Fatalf("event %s %+v, want %s", ev.Type, ev.Object, want)
			}
		case <-ctx.Done():
			t.Fatalf("no %s event", want)
		}
	}
}

// TestPropagationClientGo: client-go's delete options drive the garbage collector among
// stored objects: foreground and background delete a Lease's dependents, orphan keeps them
// without the reference.
func TestPropagationClientGo(t *testing.T) {
	t.Parallel()
	ts := mustStartServer(t, "")
	ctx := ctxT(t, 20*time.Second)
	leases := ts.Client.CoordinationV1().Leases("default")
	family := func(prefix string) (owner, dependent string) {
		o, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-owner"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		block := true
		_, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-dependent", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Name: o.Name, UID: o.UID, BlockOwnerDeletion: &block,
		}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return o.Name, prefix + "-dependent"
	}
	gone := func(name string) {
		t.Helper()
		for {
			_, err := leases.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s still there: %v", name, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationForeground, metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan} {
		owner, dependent := family(strings.ToLower(string(policy)))
		if err := leases.Delete(ctx, owner, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
			t.Fatalf("%s delete: %v", policy, err)
		}
		gone(owner)
		if policy != metav1.DeletePropagationOrphan {
			gone(dependent)
			continue
		}
		d, err := leases.Get(ctx, dependent, metav1.GetOptions{})
		if err != nil || len(d.OwnerReferences) != 0 {
			t.Fatalf("orphaned dependent: %+v, %v", d, err)
		}
	}
}
