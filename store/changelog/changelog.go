// Package changelog is the change log as a file: JSON lines, one committed change each, oldest
// first. `leaselab export` writes the lines alone; a recording (`leaselab export --history`,
// the screens' "Download recording") starts with a header line that says what it holds; and
// `leaselab replay` reads either back (store/sqlite's Import). The package writes the lines,
// reads them and checks that they form a change log; what the objects are, it does not know.
package changelog

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/leaselab/leaselab/store"
)

// Format names the format of a recording in its header.
const Format = "leaselab/v1"

// Header is the first line of a recording: {"recording":"leaselab/v1",...}.
type Header struct {
	// Recording is Format.
	Recording string `json:"recording"`
	// Exported is when the recording was written (RFC 3339).
	Exported string `json:"exported,omitempty"`
	// Namespace and Lease are the scope: every namespace when Namespace is empty, every lease
	// of the namespace when Lease is.
	Namespace string `json:"namespace,omitempty"`
	Lease     string `json:"lease,omitempty"`
	// Resources are the store resources the recording holds the changes of.
	Resources []string `json:"resources,omitempty"`
	// FirstRevision and LastRevision are the revisions of the first and the last change.
	FirstRevision int64 `json:"firstRevision"`
	LastRevision  int64 `json:"lastRevision"`
	// From and To are the earliest and the latest commit time of its changes (RFC 3339 with
	// nanoseconds).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Changes is how many change lines follow.
	Changes int64 `json:"changes"`
}

// Change is one line: one committed change.
type Change struct {
	Revision int64 `json:"revision"`
	// Type is ADDED, MODIFIED or DELETED.
	Type string `json:"type"`
	// Time is the commit time, RFC 3339 with nanoseconds, UTC.
	Time      string `json:"time"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// CreateRevision is the revision that created the object.
	CreateRevision int64 `json:"createRevision"`
	// Object is the object after the change (the last state for a delete), as stored: a JSON
	// object or array inline, anything else as a base64 string.
	Object json.RawMessage `json:"object,omitempty"`
}

// ChangeOf is the line of one committed change.
func ChangeOf(ev store.Event) Change {
	o := ev.Object
	return Change{
		Revision:       o.Revision,
		Type:           ev.Type.String(),
		Time:           FormatTime(ev.Time),
		Resource:       o.Resource,
		Namespace:      o.Namespace,
		Name:           o.Name,
		CreateRevision: o.CreateRevision,
		Object:         encodeObject(o.Value),
	}
}

// FormatTime writes a commit time as the lines do: RFC 3339 with nanoseconds, in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// encodeObject is a stored value as a line carries it: JSON objects and arrays inline (every
// API object), anything else base64, so that reading it back is never ambiguous.
func encodeObject(value []byte) json.RawMessage {
	if len(value) == 0 {
		return nil
	}
	if (value[0] == '{' || value[0] == '[') && json.Valid(value) {
		return value
	}
	b, _ := json.Marshal(value) // a []byte marshals as a base64 string
	return b
}

// decodeObject is the stored value a line's object stands for.
func decodeObject(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch raw[0] {
	case '{', '[':
		// Compact, as the Writer writes it: a file edited by hand reads back the same.
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("object: a string must be base64: %w", err)
		}
		if len(b) == 0 {
			return nil, nil // as written: an empty value has no object
		}
		return b, nil
	}
	return nil, fmt.Errorf("object: want a JSON object, an array or a base64 string, not %.20s", raw)
}

// eventType parses a line's type.
func eventType(s string) (store.EventType, bool) {
	for _, t := range []store.EventType{store.Added, store.Modified, store.Deleted} {
		if t.String() == s {
			return t, true
		}
	}
	return 0, false
}
