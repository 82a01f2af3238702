// Package store defines what leaselab keeps: API objects addressed by resource, namespace and
// name, one global revision that orders every change, and the change log that watches and the
// dashboard's history read. The SQLite implementation lives in store/sqlite; the web server only
// sees the Interface below.
package store

import (
	"context"
	"errors"
	"time"
)

// Key addresses one object. Resource is the plural resource qualified by its group
// ("leases.coordination.k8s.io", "leasecandidates.coordination.k8s.io", "events", "namespaces");
// Namespace is empty for cluster-scoped resources.
type Key struct {
	Resource  string
	Namespace string
	Name      string
}

// Object is one object as stored at one revision. Value is the caller's encoding of the object
// (the store never looks inside); the resourceVersion is not part of Value, it is Revision.
type Object struct {
	Key
	// Revision is the revision of the change that produced this state: the resourceVersion.
	Revision int64
	// CreateRevision is the revision at which the object was created.
	CreateRevision int64
	Value          []byte
}

// EventType says what a change did to its object.
type EventType int

const (
	Added EventType = iota + 1
	Modified
	Deleted
)

func (t EventType) String() string {
	switch t {
	case Added:
		return "ADDED"
	case Modified:
		return "MODIFIED"
	case Deleted:
		return "DELETED"
	}
	return "UNKNOWN"
}

// Event is one committed change. For Deleted, Object holds the last state of the object with
// Revision set to the revision of the delete. Prev is the state before the change (nil for
// Added). Time is when the change was committed, by the store's clock.
type Event struct {
	Type   EventType
	Object Object
	Prev   *Object
	Time   time.Time
}

// ListOptions selects objects of one resource.
type ListOptions struct {
	Resource string
	// Namespace restricts the list to one namespace; empty lists every namespace.
	Namespace string
	// After, when its Name is set, starts the list strictly after this (namespace, name) key, in
	// the order lists are returned: by namespace, then name. Continue tokens carry it.
	After Key
	// Limit is the maximum number of objects returned; 0 means no limit.
	Limit int
	// Revision lists the objects as they were at this revision; 0 means the current revision.
	// A revision older than the compacted one returns ErrCompacted, one newer than the current
	// revision ErrFutureRevision.
	Revision int64
	// Match, when set, filters objects; objects it rejects do not count against Limit.
	Match func(Object) bool
}

// ListResult is one page of a list.
type ListResult struct {
	Objects []Object
	// Revision is the revision the list reflects (the current revision when ListOptions.Revision
	// was 0). Continue tokens carry it so that every page is read at the same revision.
	Revision int64
	// More is true when objects after the last one returned also match.
	More bool
	// Remaining counts the objects after this page; only set when ListOptions.Match is nil.
	Remaining int64
}

// WatchOptions selects the changes a watch receives.
type WatchOptions struct {
	// Resource is required; Namespace restricts events to one namespace when non-empty.
	Resource  string
	Namespace string
	// After is the revision to start after: the watch receives every matching change with a
	// larger revision, in revision order, without gaps or duplicates. A revision older than the
	// compacted one returns ErrCompacted.
	After int64
}

// Watch is a running watch. Events is closed when the watch ends: when its context is done,
// when Close is called, when the store shuts down, or when the watcher fell too far behind (then
// Err returns ErrWatcherTooSlow) or its next change was compacted away (ErrCompacted).
type Watch interface {
	Events() <-chan Event
	// Err says why Events was closed; nil for a cancelled context, Close or a store shutdown.
	Err() error
	// Progress is a revision up to which every change has been delivered to Events (or was not
	// for this watch). With Events drained, it is safe to report as a bookmark.
	Progress() int64
	Close()
}

// Interface is what the API server needs from storage. Every write is durable before it returns,
// gets the next global revision, appends to the change log and notifies watches after commit.
type Interface interface {
	// Get returns the current state of an object, or ErrNotFound. Its Value may be shared with
	// other readers and must be treated as read-only.
	Get(ctx context.Context, key Key) (Object, error)
	// List returns a page of objects of one resource.
	List(ctx context.Context, opts ListOptions) (ListResult, error)
	// Create stores a new object; ErrExists when the key is taken.
	Create(ctx context.Context, key Key, value []byte) (Object, error)
	// Update replaces an object if its current revision is expectRevision; ErrNotFound when it
	// does not exist, ErrConflict (a *ConflictError) when the revision differs.
	Update(ctx context.Context, key Key, expectRevision int64, value []byte) (Object, error)
	// Delete removes an object, if its revision is expectRevision when that is non-zero. It
	// returns the last state with the delete's revision; ErrNotFound, ErrConflict.
	Delete(ctx context.Context, key Key, expectRevision int64) (Object, error)
	// Watch starts a watch; see WatchOptions.
	Watch(ctx context.Context, opts WatchOptions) (Watch, error)
	// History returns the changes to one object that are still in the change log with a
	// revision above after, oldest first.
	History(ctx context.Context, key Key, after int64) ([]Event, error)
	// HistoryBetween is History up to and including the revision through.
	HistoryBetween(ctx context.Context, key Key, after, through int64) ([]Event, error)
	// HistoryPrefix returns the changes still in the change log, with a revision above after
	// and, unless through is 0, at most through, to the objects of resource in namespace whose
	// names begin with prefix (every name when it is empty), in revision order.
	HistoryPrefix(ctx context.Context, resource, namespace, prefix string, after, through int64) ([]Event, error)
	// Revision returns the current revision and the compacted revision (changes at or below
	// it may be gone from the log).
	Revision(ctx context.Context) (current, compacted int64, err error)
	// RevisionAt returns the last revision committed at or before t (by the store's clock):
	// the revision to list to see the objects as they were at t; 0 when nothing was committed
	// by then. A moment whose revision was compacted away returns a *CompactedError.
	RevisionAt(ctx context.Context, t time.Time) (int64, error)
}

// Errors the store returns; test them with errors.Is.
var (
	ErrNotFound       = errors.New("not found")
	ErrExists         = errors.New("already exists")
	ErrConflict       = errors.New("revision conflict")
	ErrCompacted      = errors.New("revision compacted")
	ErrFutureRevision = errors.New("revision is in the future")
	ErrWatcherTooSlow = errors.New("watcher fell behind")
	ErrClosed         = errors.New("store closed")
	// ErrDamaged wraps the errors of a store whose storage was found damaged (a corrupt file):
	// nothing it serves can be trusted until it is restored.
	ErrDamaged = errors.New("storage damaged")
)

// DamageReporter is implemented by stores that can find their storage damaged while serving.
// Damaged returns why (an error wrapping ErrDamaged) once damage was seen, nil until then.
type DamageReporter interface {
	Damaged() error
}

// WriteHealthReporter is implemented by stores whose writes can fail for a while without
// damage, as on a full disk. WriteHealth returns nil when writes work, else why they do not.
type WriteHealthReporter interface {
	WriteHealth(ctx context.Context) error
}

// LogReader is implemented by stores that read their change log as of one snapshot: exports
// and recordings (web/lease/recording) read it whole while writes go on.
type LogReader interface {
	// ReadLog calls read with the change log as of one moment: everything read through the Log
	// belongs to that snapshot, however long read takes. It returns read's error, ErrClosed
	// after Close, or an error of the store.
	ReadLog(ctx context.Context, read func(Log) error) error
}

// Log is the change log as of one snapshot (LogReader.ReadLog).
type Log interface {
	// Revision returns the snapshot's current and compacted revisions.
	Revision() (current, compacted int64)
	// Changes calls fn with every change in the snapshot's log with a revision above after,
	// oldest first, without Prev. It stops at fn's first error and returns it, or returns an
	// error of the store.
	Changes(ctx context.Context, after int64, fn func(Event) error) error
}

// ConflictError carries the current revision of an object whose expected revision did not
// match. It matches ErrConflict with errors.Is.
type ConflictError struct {
	Expected, Actual int64
}

func (e *ConflictError) Error() string        { return ErrConflict.Error() }
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// CompactedError carries the compacted revision. It matches ErrCompacted with errors.Is.
type CompactedError struct {
	Requested, Compacted int64
}

func (e *CompactedError) Error() string        { return ErrCompacted.Error() }
func (e *CompactedError) Is(target error) bool { return target == ErrCompacted }
