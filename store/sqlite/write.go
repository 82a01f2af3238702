package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/leaselab/leaselab/store"
)

type opKind uint8

const (
	opCreate opKind = iota + 1
	opUpdate
	opDelete
)

func (k opKind) String() string {
	switch k {
	case opCreate:
		return "create"
	case opUpdate:
		return "update"
	case opDelete:
		return "delete"
	}
	return "unknown"
}

// States of a writeOp: a caller whose context ends while the op is still queued marks it
// abandoned, and the writer skips it; once the writer has taken it, it runs to the end.
const (
	opQueued int32 = iota
	opTaken
	opAbandoned
)

// writeOp is one write request to the writer goroutine.
type writeOp struct {
	kind   opKind
	key    store.Key
	expect int64
	value  []byte

	state atomic.Int32
	done  chan writeResult // buffered: the writer never waits for the caller
}

type writeResult struct {
	obj store.Object
	err error
}

// Create stores a new object. It returns store.ErrExists when the key is taken, store.ErrClosed
// after Close, the context's error when ctx ends first, or an error of the database.
func (db *DB) Create(ctx context.Context, key store.Key, value []byte) (store.Object, error) {
	return db.write(ctx, opCreate, key, 0, value)
}

// Update replaces an object whose current revision is expectRevision. It returns
// store.ErrNotFound when the object does not exist, a *store.ConflictError when its revision
// differs, store.ErrClosed after Close, the context's error when ctx ends first, or an error of
// the database.
func (db *DB) Update(ctx context.Context, key store.Key, expectRevision int64, value []byte) (store.Object, error) {
	return db.write(ctx, opUpdate, key, expectRevision, value)
}

// Delete removes an object, if its revision is expectRevision when that is non-zero, and returns
// its last state with the revision of the delete. It returns store.ErrNotFound, a
// *store.ConflictError, store.ErrClosed after Close, the context's error when ctx ends first, or
// an error of the database.
func (db *DB) Delete(ctx context.Context, key store.Key, expectRevision int64) (store.Object, error) {
	return db.write(ctx, opDelete, key, expectRevision, nil)
}

// write hands an op to the writer goroutine and waits for its result, which comes only after
// the transaction holding it committed (or failed).
func (db *DB) write(ctx context.Context, kind opKind, key store.Key, expect int64, value []byte) (store.Object, error) {
	if key.Resource == "" || key.Name == "" {
		return store.Object{}, fmt.Errorf("%s: key needs a resource and a name", kind)
	}
	if db.closed.Load() {
		return store.Object{}, store.ErrClosed
	}
	if err := db.Damaged(); err != nil {
		return store.Object{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.Object{}, err
	}
	op := &writeOp{
		kind:   kind,
		key:    key,
		expect: expect,
		value:  bytes.Clone(value), // the caller may reuse its buffer; watchers share ours
		done:   make(chan writeResult, 1),
	}
	select {
	case db.writes <- op:
	case <-ctx.Done():
		return store.Object{}, ctx.Err()
	case <-db.writerDone:
		return store.Object{}, store.ErrClosed
	}
	select {
	case r := <-op.done:
		return r.obj, r.err
	case <-ctx.Done():
		// Not taken yet: the writer will skip it. Taken: it may still commit, as any database
		// write whose caller gave up.
		op.state.CompareAndSwap(opQueued, opAbandoned)
		return store.Object{}, ctx.Err()
	case <-db.writerDone:
		select {
		case r := <-op.done:
			return r.obj, r.err
		default:
			return store.Object{}, store.ErrClosed
		}
	}
}

// writeLoop is the writer goroutine: it takes every queued op (up to maxBatch), commits them
// in one transaction, and repeats until Close.
func (db *DB) writeLoop() {
	defer close(db.acks) // the acknowledger closes writerDone once it has told everyone
	batch := make([]*writeOp, 0, maxBatch)
	for {
		// Checked first: select picks at random among ready cases, and after Close nothing
		// queued may start.
		if db.ctx.Err() != nil {
			db.failQueued()
			return
		}
		select {
		case op := <-db.writes:
			batch = append(batch, op)
		case <-db.ctx.Done():
			continue
		}
		// The transaction first: while the writer gathers, compaction (which shares its
		// connection) cannot slip a step in ahead of the batch. A failed begin is left to
		// runBatch, which begins again and reports it.
		tx, err := db.wdb.BeginTx(context.Background(), nil)
		if err != nil {
			tx = nil
		}
		if db.ctx.Err() == nil { // after Close, nothing more is taken
			db.gather()
		}
	fill:
		for len(batch) < maxBatch && db.ctx.Err() == nil {
			select {
			case op := <-db.writes:
				batch = append(batch, op)
			default:
				break fill
			}
		}
		db.commitBatch(tx, batch)
		clear(batch)
		batch = batch[:0]
	}
}

// gatherYields bounds how often the writer yields before a commit while writes keep arriving.
const gatherYields = 4

// gather lets the goroutines that are ready to run go first, as long as that brings more
// writes, so that they share the commit about to start instead of each waiting for one of
// their own: a commit's fsync and WAL frames cost the same for one write as for fifty. When
// nothing else is runnable a yield returns at once, so an idle server commits without delay;
// under load it turns the many one- and two-write commits of a busy writer into fewer,
// larger ones.
func (db *DB) gather() {
	for range gatherYields {
		n := len(db.writes)
		if n >= maxBatch {
			return
		}
		runtime.Gosched()
		if len(db.writes) == n {
			return
		}
	}
}

// failQueued answers the ops still queued at shutdown with store.ErrClosed.
func (db *DB) failQueued() {
	for {
		select {
		case op := <-db.writes:
			op.done <- writeResult{err: store.ErrClosed}
		default:
			return
		}
	}
}

// opOutcome is what one op of a batch produced inside the transaction.
type opOutcome struct {
	obj   store.Object
	event *store.Event
	err   error // the op's own failure (precondition or constraint): it does not commit
}

// commitBatch runs the ops in one transaction, then answers every caller and publishes the
// committed events in revision order. A precondition failure of one op does not affect the
// others. A statement failing with a constraint violation rolls the transaction back and the
// batch is retried without that op; any other failure, and a failed commit, fail every op of
// the batch and publish nothing.
func (db *DB) commitBatch(tx *sql.Tx, batch []*writeOp) {
	ops := make([]*writeOp, 0, len(batch))
	for _, op := range batch {
		if op.state.CompareAndSwap(opQueued, opTaken) {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		if tx != nil {
			_ = tx.Rollback()
		}
		return
	}
	if err := db.Damaged(); err != nil {
		// Found damaged while these waited: nothing more is written to the file.
		if tx != nil {
			_ = tx.Rollback()
		}
		for _, op := range ops {
			op.done <- writeResult{err: err}
		}
		return
	}
	start := time.Now()
	db.latest.begin(ops)
	all := slices.Clone(ops) // ops loses the ones that fail alone
	outcomes := make([]opOutcome, len(ops))
	for {
		failed, err := db.runBatch(tx, ops, outcomes)
		tx = nil // a retry begins its own
		if err == nil {
			break
		}
		if failed < 0 {
			err = db.noteDamage(err)
			db.noteWriteFailure(err)
			db.latest.end(all, nil)
			// The callers get the error; logging it here too would report it twice.
			db.logger.LogAttrs(context.Background(), slog.LevelDebug, "write batch failed",
				slog.Int(logKeyOps, len(ops)), slog.Any(logKeyError, err))
			for _, op := range ops {
				op.done <- writeResult{err: err}
			}
			return
		}
		// Only ops[failed] is at fault: answer it and run the rest again.
		ops[failed].done <- writeResult{err: err}
		ops = append(ops[:failed], ops[failed+1:]...)
		outcomes = outcomes[:len(ops)]
		if len(ops) == 0 {
			db.latest.end(all, nil)
			return
		}
	}

	db.commits.Add(1)
	events := make([]store.Event, 0, len(ops))
	committed := make(map[store.Key]*store.Event, len(ops))
	var last int64
	nFailed := 0
	for i := range outcomes {
		if e := outcomes[i].event; e != nil {
			events = append(events, *e)
			committed[e.Object.Key] = e
			last = e.Object.Revision
		} else {
			nFailed++
		}
	}
	// Before anyone can know of the commit: see latest.
	db.latest.end(all, committed)
	db.noteWriteFailure(nil)
	// The acknowledger answers the callers and publishes the events once the revision record
	// is on disk, while this goroutine goes on with the next batch.
	db.acks <- &ackBatch{ops: ops, outcomes: outcomes, events: events, last: last}
	db.logger.LogAttrs(context.Background(), slog.LevelDebug, "write batch committed",
		slog.Int(logKeyOps, len(ops)), slog.Int(logKeyFailed, nFailed),
		slog.Int64(logKeyRevision, last), slog.Duration(logKeyDuration, time.Since(start)))
}

// runBatch executes ops in one IMMEDIATE transaction and commits it, filling outcomes. On a
// constraint violation of one op's statement it rolls back and returns that op's index with
// the error; on any other failure it returns -1 and the error.
func (db *DB) runBatch(tx *sql.Tx, ops []*writeOp, outcomes []opOutcome) (failed int, err error) {
	// Not the caller's context: once taken, an op is as good as any other of the batch.
	ctx := context.Background()
	if tx == nil {
		if tx, err = db.wdb.BeginTx(ctx, nil); err != nil {
			return -1, fmt.Errorf("begin write: %w", err)
		}
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	st := db.w.in(ctx, tx)
	defer st.close()

	// This goroutine is the only writer, so it assigns revisions itself (create_rev of a new
	// object is its own revision, known before the insert). sqlite_sequence is the high-water
	// mark even when compaction deleted the newest rows.
	var rev int64
	if err := st.seq.QueryRowContext(ctx).Scan(&rev); err != nil {
		return -1, fmt.Errorf("read revision: %w", err)
	}
	now := db.opts.Now().UnixNano()
	written := make(map[store.Key]*store.Object, len(ops))
	for i, op := range ops {
		outcomes[i] = opOutcome{}
		err := db.apply(ctx, st, op, rev+1, now, &outcomes[i], written)
		if err != nil {
			if isConstraint(err) {
				return i, translate(err)
			}
			return -1, err
		}
		if outcomes[i].event != nil {
			rev++
		}
	}
	if err := db.reserve(rev); err != nil {
		return -1, err
	}
	if err := tx.Commit(); err != nil {
		return -1, fmt.Errorf("commit: %w", err)
	}
	return 0, nil
}

// apply checks op's precondition against the current row and, only when it holds, appends the
// change and updates objects. A failed precondition goes into out.err and runs no statement;
// the returned error is a failed statement.
func (db *DB) apply(ctx context.Context, st *txStmts, op *writeOp, rev, now int64, out *opOutcome, written map[store.Key]*store.Object) error {
	k := op.key
	cur, exists, err := db.current(ctx, st, k, written)
	if err != nil {
		return err
	}

	var typ store.EventType
	obj := store.Object{Key: k, Revision: rev}
	switch op.kind {
	case opCreate:
		if exists {
			out.err = store.ErrExists
			return nil
		}
		typ = store.Added
		obj.CreateRevision = rev
		obj.Value = op.value
	case opUpdate:
		if !exists {
			out.err = store.ErrNotFound
			return nil
		}
		if cur.Revision != op.expect {
			out.err = &store.ConflictError{Expected: op.expect, Actual: cur.Revision}
			return nil
		}
		typ = store.Modified
		obj.CreateRevision = cur.CreateRevision
		obj.Value = op.value
	case opDelete:
		if !exists {
			out.err = store.ErrNotFound
			return nil
		}
		if op.expect != 0 && cur.Revision != op.expect {
			out.err = &store.ConflictError{Expected: op.expect, Actual: cur.Revision}
			return nil
		}
		typ = store.Deleted
		obj.CreateRevision = cur.CreateRevision
		obj.Value = cur.Value
	default:
		return fmt.Errorf("unknown write %d", op.kind)
	}

	var prevRev int64
	var prev *store.Object
	if exists {
		prevRev = cur.Revision
		prev = &cur
	}
	if _, err := st.insertChange.ExecContext(ctx, rev, k.Resource, k.Namespace, k.Name, int(typ),
		obj.CreateRevision, prevRev, obj.Value, now); err != nil {
		return fmt.Errorf("append change: %w", err)
	}
	switch typ {
	case store.Added:
		_, err = st.insertObject.ExecContext(ctx, k.Resource, k.Namespace, k.Name, rev, rev, obj.Value)
	case store.Modified:
		_, err = st.updateObject.ExecContext(ctx, rev, obj.Value, k.Resource, k.Namespace, k.Name)
	case store.Deleted:
		_, err = st.deleteObject.ExecContext(ctx, k.Resource, k.Namespace, k.Name)
	}
	if err != nil {
		return fmt.Errorf("%s object: %w", op.kind, err)
	}
	if typ == store.Deleted {
		written[k] = nil
	} else {
		written[k] = &obj
	}
	out.obj = obj
	out.event = &store.Event{Type: typ, Object: obj, Prev: prev, Time: time.Unix(0, now)}
	return nil
}

// current returns the state of k inside the batch's transaction: what an earlier op of the
// batch wrote (nil: deleted), else the state the writer last committed, which latest holds for
// recently written keys, else the row itself. Only this goroutine writes objects, so a state it
// committed stays current until it writes k again; a lease renewal then needs no read.
func (db *DB) current(ctx context.Context, st *txStmts, k store.Key, written map[store.Key]*store.Object) (store.Object, bool, error) {
	if o, ok := written[k]; ok {
		if o == nil {
			return store.Object{Key: k}, false, nil
		}
		return *o, true, nil
	}
	if o, ok := db.latest.committed(k); ok {
		return o, true, nil
	}
	cur := store.Object{Key: k}
	err := st.get.QueryRowContext(ctx, k.Resource, k.Namespace, k.Name).Scan(&cur.Revision, &cur.CreateRevision, &cur.Value)
	if errors.Is(err, sql.ErrNoRows) {
		return cur, false, nil
	}
	if err != nil {
		return cur, false, fmt.Errorf("read object: %w", err)
	}
	return cur, true, nil
}

const (
	sqlGet = `SELECT rev, create_rev, value FROM objects WHERE resource = ? AND namespace = ? AND name = ?`
	// sqlSeq is the current revision: the AUTOINCREMENT high-water mark, which stays when
	// compaction deletes the newest rows (max(rev) covers a database without the sequence row).
	sqlSeq = `SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'changes'), 0),
		coalesce((SELECT max(rev) FROM changes), 0))`
	sqlInsertChange = `INSERT INTO changes (rev, resource, namespace, name, type, create_rev, prev_rev, value, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlInsertObject = `INSERT INTO objects (resource, namespace, name, rev, create_rev, value) VALUES (?, ?, ?, ?, ?, ?)`
	sqlUpdateObject = `UPDATE objects SET rev = ?, value = ? WHERE resource = ? AND namespace = ? AND name = ?`
	sqlDeleteObject = `DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?`
)

// writeStmts are the writer's statements, prepared once on the writer connection.
type writeStmts struct {
	get, seq, insertChange, insertObject, updateObject, deleteObject *sql.Stmt
}

func (w *writeStmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, s := range []struct {
		dst   **sql.Stmt
		query string
	}{
		{&w.get, sqlGet},
		{&w.seq, sqlSeq},
		{&w.insertChange, sqlInsertChange},
		{&w.insertObject, sqlInsertObject},
		{&w.updateObject, sqlUpdateObject},
		{&w.deleteObject, sqlDeleteObject},
	} {
		stmt, err := db.PrepareContext(ctx, s.query)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		*s.dst = stmt
	}
	return nil
}

func (w *writeStmts) all() []*sql.Stmt {
	return []*sql.Stmt{w.get, w.seq, w.insertChange, w.insertObject, w.updateObject, w.deleteObject}
}

func (w *writeStmts) close() error {
	var errs []error
	for _, s := range w.all() {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}

// txStmts are the writer's statements bound to one transaction.
type txStmts struct {
	get, seq, insertChange, insertObject, updateObject, deleteObject *sql.Stmt
}

func (w *writeStmts) in(ctx context.Context, tx *sql.Tx) *txStmts {
	return &txStmts{
		get:          tx.StmtContext(ctx, w.get),
		seq:          tx.StmtContext(ctx, w.seq),
		insertChange: tx.StmtContext(ctx, w.insertChange),
		insertObject: tx.StmtContext(ctx, w.insertObject),
		updateObject: tx.StmtContext(ctx, w.updateObject),
		deleteObject: tx.StmtContext(ctx, w.deleteObject),
	}
}

func (t *txStmts) close() {
	for _, s := range []*sql.Stmt{t.get, t.seq, t.insertChange, t.insertObject, t.updateObject, t.deleteObject} {
		_ = s.Close()
	}
}
