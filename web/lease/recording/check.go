package recording

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/changelog"
	"github.com/leaselab/leaselab/web/lease/traffic"
	"github.com/leaselab/leaselab/web/lease/views"
)

// Checker is what `leaselab replay` reads a file with (changelog.Checker): a file anyone may
// have edited holds only what a recording holds, so that no line can configure the server (a
// workshop identity would turn tokens on, with a token its author knows), and only objects the
// server can read back, so that no line can make its pages and lists fail.
func (r *Recorder) Checker() changelog.Checker { return checker{r} }

type checker struct{ r *Recorder }

// Header refuses a header that lists a resource no recording holds.
func (c checker) Header(h changelog.Header) error {
	for _, res := range h.Resources {
		if !c.holds(res) {
			return fmt.Errorf("the header lists resource %q, which a recording never holds (it holds %s): refused, as it could configure the server; replay a recording leaselab wrote",
				res, strings.Join(c.r.Resources(), ", "))
		}
	}
	return nil
}

// Change refuses a change of a resource no recording holds (a plain export has no header to
// list them), and one whose object the server could not decode.
func (c checker) Change(ev store.Event) error {
	o := ev.Object
	if !c.holds(o.Resource) {
		return fmt.Errorf("resource %q is not one a recording holds (%s): refused, as it could configure the server; replay a recording leaselab wrote",
			o.Resource, strings.Join(c.r.Resources(), ", "))
	}
	if err := c.decodes(o); err != nil {
		return fmt.Errorf("%s %s at revision %d cannot be read back by the server: %v; replay a recording leaselab wrote",
			o.Resource, objectName(o.Key), o.Revision, err)
	}
	return nil
}

func (c checker) holds(resource string) bool { return slices.Contains(c.r.Resources(), resource) }

// decodes decodes o as the server does when it reads it from its store: with the kinds
// registry's DecodeStored, a candidate view as web/lease/views reads one, and a batch of a
// lease's requests as web/lease/traffic reads one.
func (c checker) decodes(o store.Object) error {
	if len(o.Value) == 0 {
		return errors.New("it has no object (every change carries the object after it; a delete, its last state)")
	}
	if o.Resource == CandidateViewResource {
		_, err := views.RecordOf(o)
		return cmp.Or(errors.Unwrap(err), err) // RecordOf names the view, which Change does
	}
	if o.Resource == RequestsResource {
		_, err := traffic.BatchOf(o)
		return cmp.Or(errors.Unwrap(err), err)
	}
	_, err := c.r.reg.DecodeStored(c.r.reg.ByStorageResource(o.Resource), o.Value, o.Revision)
	return err
}

// objectName is "demo/x", or "demo" for a cluster-scoped object.
func objectName(k store.Key) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}
