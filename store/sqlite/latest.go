package sqlite

import (
	"sync"

	"github.com/leaselab/leaselab/store"
)

// latestSize bounds how many objects latest keeps.
const latestSize = 16384

// latest keeps the current state of objects so that Get need not read SQLite: a renewal's GET
// reads the object its previous PUT wrote.
//
// A reader must never get an older state than a read of the database could give it at that
// moment. So the writer marks the keys of a batch pending before it commits, and replaces the
// marks with the committed states (or removes them) before it answers or publishes anything;
// Get reads the database for a pending key. A reader that read the database adds what it read
// only when no batch began in the meantime (gen) and the key has no entry.
type latest struct {
	mu  sync.Mutex
	gen uint64 // incremented when a batch begins
	m   map[store.Key]latestEntry
}

type latestEntry struct {
	obj     store.Object
	pending bool
}

func newLatest() *latest {
	return &latest{m: make(map[store.Key]latestEntry)}
}

// get returns the object under k, or false and the generation to pass to fill.
func (c *latest) get(k store.Key) (store.Object, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok && !e.pending {
		return e.obj, 0, true
	}
	return store.Object{}, c.gen, false
}

// committed returns the state of k as the database holds it, for the writer between its
// batches and inside one (a key of the batch keeps its last committed state while pending).
func (c *latest) committed(k store.Key) (store.Object, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	// A key first written by the current batch has an entry without a state yet.
	return e.obj, ok && e.obj.Revision > 0
}

// fill adds an object a reader read after get returned gen.
func (c *latest) fill(obj store.Object, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[obj.Key]; ok || c.gen != gen || len(c.m) >= latestSize {
		return
	}
	c.m[obj.Key] = latestEntry{obj: obj}
}

// begin marks the keys a batch writes as pending; the writer calls it before the commit.
func (c *latest) begin(ops []*writeOp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, op := range ops {
		e := c.m[op.key]
		e.pending = true
		c.m[op.key] = e
	}
}

// end records the outcome of a batch begun with begin: the committed state of each key written,
// none for a key deleted or not written (its next Get reads the database).
func (c *latest) end(ops []*writeOp, committed map[store.Key]*store.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, op := range ops {
		e, ok := committed[op.key]
		if !ok || e.Type == store.Deleted || len(c.m) > latestSize {
			delete(c.m, op.key)
			continue
		}
		c.m[op.key] = latestEntry{obj: e.Object}
	}
}
