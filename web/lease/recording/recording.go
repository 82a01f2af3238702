// Package recording writes recordings: the part of the change log a namespace's or a lease's
// story is made of (its Leases, LeaseCandidates, the candidates' views, the requests on its
// leases, the Namespace and the Events) as a change log file (store/changelog) with a header. `leaselab export --history`
// and the screens' "Download recording" (/ui/history) both write them here, from a snapshot of
// the database; `leaselab replay` serves one, read through Checker. Nothing that holds a secret
// (the workshop's identities) is ever in a recording: only the resources listed here are, and
// Checker refuses a file that holds anything else.
package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/changelog"
	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/lease/traffic"
	"github.com/leaselab/leaselab/web/lease/views"
)

// CandidateViewResource is the store resource of the candidates' own views of each lease
// (web/lease/views): namespace the lease's, name "<lease>/<identity>". A recording carries them as
// they are.
const CandidateViewResource = views.Resource

// RequestsResource is the store resource of the requests on each lease (web/lease/traffic):
// namespace and name the lease's. A recording carries them as they are.
const RequestsResource = traffic.Resource

// Scope is what a recording is of: a namespace, or one lease of it; everything when empty.
type Scope struct {
	Namespace string
	// Lease narrows the recording to one Lease, the LeaseCandidates whose spec.leaseName names
	// it, the candidates' views of it, the requests on it and the Events about it.
	Lease string
}

// Validate says what is wrong with a scope: a namespace that is not a DNS-1123 label, a lease
// name that is not a DNS-1123 subdomain, or a lease without its namespace.
//
//said:english an error of the command line's and the API's, as Kubernetes words its own
func (s Scope) Validate() error {
	var problems []string
	if s.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(s.Namespace) {
			problems = append(problems, fmt.Sprintf("namespace %q is not valid: %s", s.Namespace, msg))
		}
	}
	if s.Lease != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.Lease) {
			problems = append(problems, fmt.Sprintf("lease name %q is not valid: %s", s.Lease, msg))
		}
		if s.Namespace == "" {
			problems = append(problems, "a lease needs its namespace")
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// FileName is the name a recording of scope written at t is offered under:
// leaselab-NS-NAME-20260102T030405Z.jsonl (leaselab-all-... for everything).
func FileName(s Scope, t time.Time) string {
	parts := []string{"leaselab"}
	switch {
	case s.Namespace == "":
		parts = append(parts, "all")
	case s.Lease == "":
		parts = append(parts, s.Namespace)
	default:
		parts = append(parts, s.Namespace, s.Lease)
	}
	parts = append(parts, t.UTC().Format("20060102T150405Z"))
	return strings.Join(parts, "-") + ".jsonl"
}

// Recorder writes recordings of the objects of a kinds registry.
type Recorder struct {
	reg                                    *kinds.Registry
	leases, candidates, namespaces, events *kinds.Kind
}

// New returns a Recorder for the kinds of reg. It fails when reg does not serve a kind a
// recording holds.
func New(reg *kinds.Registry) (*Recorder, error) {
	r := &Recorder{reg: reg}
	for _, k := range []struct {
		dst                      **kinds.Kind
		group, version, resource string
	}{
		{&r.leases, "coordination.k8s.io", "v1", "leases"},
		{&r.candidates, "coordination.k8s.io", "v1beta1", "leasecandidates"},
		{&r.namespaces, "", "v1", "namespaces"},
		{&r.events, "", "v1", "events"},
	} {
		if *k.dst = reg.Lookup(k.group, k.version, k.resource); *k.dst == nil {
			return nil, fmt.Errorf("recording: registry does not serve %s/%s %s", k.group, k.version, k.resource)
		}
	}
	return r, nil
}

// Resources are the store resources a recording holds the changes of.
func (r *Recorder) Resources() []string {
	return []string{r.leases.StorageResource(), r.candidates.StorageResource(), CandidateViewResource,
		r.namespaces.StorageResource(), r.events.StorageResource(), RequestsResource}
}

// Write writes the recording of scope to w, read from src as of one snapshot: the header
// (written at now), then every change of every object in the scope, oldest first. An object is
// in the scope when any of its changes is: its history is never cut in two. It returns an error
// of the store or of w, or one decoding a stored object.
func (r *Recorder) Write(ctx context.Context, w io.Writer, src store.LogReader, scope Scope, now time.Time) error {
	return src.ReadLog(ctx, func(l store.Log) error {
		objs, err := r.collect(ctx, l, scope)
		if err != nil {
			return err
		}
		if err := r.found(objs, scope); err != nil {
			return err
		}
		cw := changelog.NewWriter(w)
		h := objs.header(scope, now)
		h.Resources = r.Resources()
		if err := cw.Header(h); err != nil {
			return err
		}
		err = l.Changes(ctx, 0, func(ev store.Event) error {
			if !objs.in(ev.Object.Key) {
				return nil
			}
			return cw.Change(ev)
		})
		if err != nil {
			return err
		}
		return cw.Flush()
	})
}

// ErrNothingToRecord is the error of a recording of a lease or namespace that has no change in
// the log: it never existed, or compaction dropped its whole history.
var ErrNothingToRecord = errors.New("nothing to record")

// found says that the scope's lease, or anything of its namespace, is in the log.
func (r *Recorder) found(objs objects, s Scope) error {
	switch {
	case s.Lease != "":
		if objs.in(store.Key{Resource: r.leases.StorageResource(), Namespace: s.Namespace, Name: s.Lease}) {
			return nil
		}
		return fmt.Errorf("no lease %s/%s in the database's history: %w", s.Namespace, s.Lease, ErrNothingToRecord)
	case s.Namespace != "":
		for _, o := range objs {
			if o.in {
				return nil
			}
		}
		return fmt.Errorf("no namespace %s in the database's history: %w", s.Namespace, ErrNothingToRecord)
	}
	return nil
}

// collect reads the log once and finds the objects in scope, with what the header says of
// their changes.
func (r *Recorder) collect(ctx context.Context, l store.Log, scope Scope) (objects, error) {
	objs := objects{}
	err := l.Changes(ctx, 0, func(ev store.Event) error {
		k := ev.Object.Key
		o, seen := objs[k]
		if !seen && !r.inResources(k, scope) {
			return nil
		}
		if !o.in {
			in, err := r.holds(ev.Object, scope)
			if err != nil {
				return err
			}
			o.in = in
		}
		o.add(ev)
		objs[k] = o
		return nil
	})
	return objs, err
}

// inResources says whether k is of a resource a recording holds, in the scope's namespace.
func (r *Recorder) inResources(k store.Key, s Scope) bool {
	switch k.Resource {
	case r.namespaces.StorageResource():
		return s.Namespace == "" || k.Name == s.Namespace
	case r.leases.StorageResource(), r.candidates.StorageResource(), CandidateViewResource, RequestsResource, r.events.StorageResource():
		return s.Namespace == "" || k.Namespace == s.Namespace
	}
	return false
}

// holds says whether one state of an object of the scope's resources and namespace puts it in
// the scope's lease.
func (r *Recorder) holds(o store.Object, s Scope) (bool, error) {
	if s.Lease == "" {
		return true, nil
	}
	switch o.Resource {
	case r.leases.StorageResource(), RequestsResource:
		return o.Name == s.Lease, nil
	case CandidateViewResource:
		return strings.HasPrefix(o.Name, s.Lease+"/"), nil
	case r.candidates.StorageResource():
		lc, err := decode[*coordinationv1beta1.LeaseCandidate](r.reg, r.candidates, o)
		return err == nil && lc.Spec.LeaseName == s.Lease, err
	case r.events.StorageResource():
		ev, err := decode[*corev1.Event](r.reg, r.events, o)
		if err != nil {
			return false, err
		}
		ref := ev.InvolvedObject
		return ref.Kind == "Lease" && ref.Name == s.Lease && (ref.Namespace == "" || ref.Namespace == o.Namespace), nil
	}
	return true, nil // the namespace itself
}

// decode decodes a stored object of kind k as a T.
func decode[T any](reg *kinds.Registry, k *kinds.Kind, o store.Object) (T, error) {
	var zero T
	obj, err := reg.DecodeStored(k, o.Value, o.Revision)
	if err != nil {
		return zero, fmt.Errorf("recording: %s %s/%s at revision %d: %w", k.Resource, o.Namespace, o.Name, o.Revision, err)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("recording: %s %s/%s decodes as %T", k.Resource, o.Namespace, o.Name, obj)
	}
	return t, nil
}

// objects are the objects of the scope's resources seen in the log.
type objects map[store.Key]object

// object is what the log holds of one object.
type object struct {
	in          bool // in the scope
	changes     int64
	first, last int64
	from, to    time.Time
}

func (o *object) add(ev store.Event) {
	if o.changes == 0 || ev.Time.Before(o.from) {
		o.from = ev.Time
	}
	if o.changes == 0 || ev.Time.After(o.to) {
		o.to = ev.Time
	}
	if o.changes == 0 {
		o.first = ev.Object.Revision
	}
	o.last = ev.Object.Revision
	o.changes++
}

func (objs objects) in(k store.Key) bool { return objs[k].in }

// header sums up the changes of the objects in the scope.
func (objs objects) header(s Scope, now time.Time) changelog.Header {
	h := changelog.Header{Recording: changelog.Format, Exported: now.UTC().Format(time.RFC3339), Namespace: s.Namespace, Lease: s.Lease}
	var sum object
	for _, o := range objs {
		if !o.in {
			continue
		}
		if sum.changes == 0 || o.first < sum.first {
			sum.first = o.first
		}
		if o.last > sum.last {
			sum.last = o.last
		}
		if sum.changes == 0 || o.from.Before(sum.from) {
			sum.from = o.from
		}
		if o.to.After(sum.to) {
			sum.to = o.to
		}
		sum.changes += o.changes
	}
	h.FirstRevision, h.LastRevision, h.Changes = sum.first, sum.last, sum.changes
	if sum.changes > 0 {
		h.From, h.To = changelog.FormatTime(sum.from), changelog.FormatTime(sum.to)
	}
	return h
}
