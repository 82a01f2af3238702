package changelog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/store"
)

// MaxLine bounds one line of a change log file: the API takes bodies of 3 MiB, and a line
// carries one object with its base64 or escaping overhead.
const MaxLine = 16 << 20

// LineError is a line that is not what a change log holds.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Reader reads a change log file, a recording or a plain export, and checks that it is one:
// JSON lines, the header (when there is one) first, every change of a resource the header
// lists, revisions increasing, and each object's changes in an order a change log can hold
// (created while it does not exist, changed or deleted while it does).
type Reader struct {
	sc     *bufio.Scanner
	check  Checker
	line   int
	header *Header
	sum    Header
	from   time.Time
	to     time.Time
	prev   int // the line of the last change
	keys   map[store.Key]*keyState
	done   bool
}

// keyState is what the lines read so far say of one object.
type keyState struct {
	obj    store.Object
	exists bool
	line   int
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	return &Reader{sc: sc, keys: map[store.Key]*keyState{}}
}

// Checker judges what the format cannot, knowing what the objects are: which resources a
// header may list, and whether each change's object is one the reader of the file can use.
// The Reader reports its errors on the line they are about.
type Checker interface {
	// Header checks a recording's header; a plain export has none.
	Header(Header) error
	// Change checks one change once the format's own rules passed.
	Change(store.Event) error
}

// Check has the reader run c on the header and on every change, and returns the reader.
func (r *Reader) Check(c Checker) *Reader {
	r.check = c
	return r
}

// Next returns the next change as an event of the store (Prev set when an earlier line holds
// the object's state before it), or io.EOF after the last one. Any other error is a
// *LineError, or the reader's own error; the reader is done after it.
func (r *Reader) Next() (store.Event, error) {
	if r.done {
		return store.Event{}, io.EOF
	}
	ev, err := r.next()
	if err != nil {
		r.done = true
	}
	return ev, err
}

func (r *Reader) next() (store.Event, error) {
	for r.sc.Scan() {
		r.line++
		b := bytes.TrimSpace(r.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		isHeader, err := r.readHeader(b)
		if err != nil {
			return store.Event{}, r.errorf("%v", err)
		}
		if isHeader {
			continue
		}
		return r.change(b)
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return store.Event{}, &LineError{Line: r.line + 1, Err: fmt.Errorf("longer than %d MiB", MaxLine>>20)}
		}
		return store.Event{}, err
	}
	return store.Event{}, r.end()
}

// readHeader reads b as the header when it is the first line and one.
func (r *Reader) readHeader(b []byte) (bool, error) {
	if r.header != nil || r.prev > 0 {
		return false, nil
	}
	var probe struct {
		Recording *string `json:"recording"`
	}
	if err := json.Unmarshal(b, &probe); err != nil || probe.Recording == nil {
		return false, nil // a change, which reports its own errors
	}
	var h Header
	if err := json.Unmarshal(b, &h); err != nil {
		return false, fmt.Errorf("header: %w", err)
	}
	if h.Recording != Format {
		return false, fmt.Errorf("the recording's format is %q; this leaselab reads %q", h.Recording, Format)
	}
	if r.check != nil {
		if err := r.check.Header(h); err != nil {
			return false, err
		}
	}
	r.header = &h
	return true, nil
}

// line is a change line; Recording catches a header out of place.
type line struct {
	Recording *string `json:"recording"`
	Change
}

// change parses and checks one change line.
func (r *Reader) change(b []byte) (store.Event, error) {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return store.Event{}, r.errorf("not a JSON change: %v", err)
	}
	if l.Recording != nil {
		return store.Event{}, r.errorf("a header, which may only be the first line")
	}
	ev, err := r.parse(l.Change)
	if err != nil {
		return store.Event{}, r.errorf("%v", err)
	}
	if err := r.listed(ev.Object.Resource); err != nil {
		return store.Event{}, r.errorf("%v", err)
	}
	if r.check != nil {
		if err := r.check.Change(ev); err != nil {
			return store.Event{}, r.errorf("%v", err)
		}
	}
	if err := r.follow(&ev); err != nil {
		return store.Event{}, r.errorf("%v", err)
	}
	r.count(ev)
	return ev, nil
}

// parse checks the fields of a change on their own and turns it into an event.
func (r *Reader) parse(c Change) (store.Event, error) {
	var ev store.Event
	if c.Revision <= 0 {
		return ev, fmt.Errorf("revision %d: want a positive revision", c.Revision)
	}
	if r.prev > 0 && c.Revision <= r.sum.LastRevision {
		return ev, fmt.Errorf("revision %d does not follow revision %d of line %d: revisions must increase", c.Revision, r.sum.LastRevision, r.prev)
	}
	typ, ok := eventType(c.Type)
	if !ok {
		return ev, fmt.Errorf("type %q: want ADDED, MODIFIED or DELETED", c.Type)
	}
	t, err := time.Parse(time.RFC3339Nano, c.Time)
	if err != nil {
		return ev, fmt.Errorf("time %q: want RFC 3339, such as 2026-11-25T14:02:11.3Z", c.Time)
	}
	if c.Resource == "" || c.Name == "" {
		return ev, fmt.Errorf("resource and name are required")
	}
	if c.CreateRevision <= 0 || c.CreateRevision > c.Revision || typ == store.Added && c.CreateRevision != c.Revision {
		return ev, fmt.Errorf("createRevision %d does not fit a change %s at revision %d", c.CreateRevision, c.Type, c.Revision)
	}
	value, err := decodeObject(c.Object)
	if err != nil {
		return ev, err
	}
	ev.Type, ev.Time = typ, t
	ev.Object = store.Object{
		Key:            store.Key{Resource: c.Resource, Namespace: c.Namespace, Name: c.Name},
		Revision:       c.Revision,
		CreateRevision: c.CreateRevision,
		Value:          value,
	}
	return ev, nil
}

// listed refuses a resource the header does not list: a recording holds what its header says
// and nothing else, so that a line added to it cannot slip in another kind of object. A plain
// export has no header, and no list.
func (r *Reader) listed(resource string) error {
	if r.header == nil || slices.Contains(r.header.Resources, resource) {
		return nil
	}
	listed := "none"
	if len(r.header.Resources) > 0 {
		listed = strings.Join(r.header.Resources, ", ")
	}
	return fmt.Errorf("resource %q is not one the header lists (%s): a recording holds only what its header lists, so the line was added to it; replay the file as leaselab wrote it", resource, listed)
}

// follow checks that ev can follow the earlier lines about its object, sets its Prev and
// records it. An object's first line may change or delete it: the log it came from may have
// been compacted, or the export may start after a revision.
func (r *Reader) follow(ev *store.Event) error {
	k := ev.Object.Key
	st := r.keys[k]
	if st == nil {
		r.keys[k] = &keyState{obj: ev.Object, exists: ev.Type != store.Deleted, line: r.line}
		return nil
	}
	what := ev.Type.String() + " of " + objectText(k)
	switch {
	case st.exists && ev.Type == store.Added:
		return fmt.Errorf("%s, which exists since line %d", what, st.line)
	case !st.exists && ev.Type != store.Added:
		return fmt.Errorf("%s, which line %d deleted", what, st.line)
	case st.exists && ev.Object.CreateRevision != st.obj.CreateRevision:
		return fmt.Errorf("%s: createRevision %d, while line %d says %d", what, ev.Object.CreateRevision, st.line, st.obj.CreateRevision)
	}
	if st.exists {
		prev := st.obj
		ev.Prev = &prev
	}
	st.obj, st.exists, st.line = ev.Object, ev.Type != store.Deleted, r.line
	return nil
}

// objectText names an object in an error: "leases.coordination.k8s.io demo/x".
func objectText(k store.Key) string {
	if k.Namespace == "" {
		return k.Resource + " " + k.Name
	}
	return k.Resource + " " + k.Namespace + "/" + k.Name
}

// count adds ev to the summary.
func (r *Reader) count(ev store.Event) {
	if r.prev == 0 {
		r.sum.FirstRevision = ev.Object.Revision
		r.from, r.to = ev.Time, ev.Time
	}
	r.prev = r.line
	r.sum.LastRevision = ev.Object.Revision
	r.sum.Changes++
	if ev.Time.Before(r.from) {
		r.from = ev.Time
	}
	if ev.Time.After(r.to) {
		r.to = ev.Time
	}
}

// end checks, at the end of the file, that it holds what its header announced: a recording
// cut short (an interrupted download) is refused rather than replayed as if it were whole.
func (r *Reader) end() error {
	h := r.header
	if h == nil {
		return io.EOF
	}
	if h.Changes != r.sum.Changes || h.Changes > 0 && (h.FirstRevision != r.sum.FirstRevision || h.LastRevision != r.sum.LastRevision) {
		return fmt.Errorf("the header announces %d changes, revisions %d to %d, and the file holds %d, revisions %d to %d: it is incomplete or was edited",
			h.Changes, h.FirstRevision, h.LastRevision, r.sum.Changes, r.sum.FirstRevision, r.sum.LastRevision)
	}
	return io.EOF
}

// Summary describes what was read: the header when there was one, with the revisions, the
// times and the count of the changes read so far. Recording is empty for a file without a
// header.
func (r *Reader) Summary() Header {
	var s Header
	if r.header != nil {
		s = *r.header
	}
	s.FirstRevision, s.LastRevision, s.Changes = r.sum.FirstRevision, r.sum.LastRevision, r.sum.Changes
	s.From, s.To = "", ""
	if r.sum.Changes > 0 {
		s.From, s.To = FormatTime(r.from), FormatTime(r.to)
	}
	return s
}

func (r *Reader) errorf(format string, args ...any) error {
	return &LineError{Line: r.line, Err: fmt.Errorf(format, args...)}
}
