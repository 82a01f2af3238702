package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leaselab/leaselab/store"
)

// matchChunk is how many rows a filtered list reads per query while it fills a page.
const matchChunk = 256

// Get returns the current state of an object. It returns store.ErrNotFound when it does not
// exist, store.ErrClosed after Close, or an error of the database.
func (db *DB) Get(ctx context.Context, key store.Key) (store.Object, error) {
	if db.closed.Load() {
		return store.Object{}, store.ErrClosed
	}
	obj, gen, ok := db.latest.get(key)
	if ok {
		return obj, nil
	}
	obj = store.Object{Key: key}
	err := db.getStmt.QueryRowContext(ctx, key.Resource, key.Namespace, key.Name).Scan(&obj.Revision, &obj.CreateRevision, &obj.Value)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Object{}, store.ErrNotFound
	}
	if err != nil {
		return store.Object{}, db.readErr("get", err)
	}
	db.latest.fill(obj, gen)
	return obj, nil
}

// Revision returns the current and the compacted revision. It returns store.ErrClosed after
// Close, or an error of the database.
func (db *DB) Revision(ctx context.Context) (current, compacted int64, err error) {
	if db.closed.Load() {
		return 0, 0, store.ErrClosed
	}
	tx, err := db.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, 0, db.readErr("begin read", err)
	}
	defer func() { _ = tx.Rollback() }()
	current, compacted, err = readRevisions(ctx, tx)
	if err != nil {
		return 0, 0, db.readErr("read revision", err)
	}
	return current, compacted, nil
}

// readRevisions reads the current and the compacted revision. As the first read of a read
// transaction it also fixes the snapshot that the transaction's later reads see.
func readRevisions(ctx context.Context, tx *sql.Tx) (current, compacted int64, err error) {
	err = tx.QueryRowContext(ctx, `SELECT (`+sqlSeq+`), coalesce((SELECT value FROM meta WHERE key = 'compacted'), 0)`).
		Scan(&current, &compacted)
	return current, compacted, err
}

// List returns a page of objects of one resource, ordered by namespace then name, as of
// opts.Revision (0: the current revision). It returns a *store.CompactedError when that
// revision is below the compacted one, store.ErrFutureRevision when it is above the current
// one, store.ErrClosed after Close, or an error of the database.
func (db *DB) List(ctx context.Context, opts store.ListOptions) (store.ListResult, error) {
	if opts.Resource == "" {
		return store.ListResult{}, errors.New("list: resource is required")
	}
	if opts.Limit < 0 || opts.Revision < 0 {
		return store.ListResult{}, errors.New("list: negative limit or revision")
	}
	if db.closed.Load() {
		return store.ListResult{}, store.ErrClosed
	}
	// One read transaction: the revision and every page read below come from one snapshot.
	tx, err := db.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return store.ListResult{}, db.readErr("begin list", err)
	}
	defer func() { _ = tx.Rollback() }()
	current, compacted, err := readRevisions(ctx, tx)
	if err != nil {
		return store.ListResult{}, db.readErr("list revision", err)
	}

	q := listQuery{resource: opts.Resource, namespace: opts.Namespace}
	switch rev := opts.Revision; {
	case rev == 0 || rev == current:
		q.revision = 0 // the objects table is the current state
	case rev > current:
		return store.ListResult{}, store.ErrFutureRevision
	case rev < compacted:
		return store.ListResult{}, &store.CompactedError{Requested: rev, Compacted: compacted}
	default:
		q.revision = rev
	}
	res := store.ListResult{Revision: current}
	if q.revision != 0 {
		res.Revision = q.revision
	}

	after, hasAfter := opts.After, opts.After.Name != ""
	chunk := -1 // no LIMIT
	switch {
	case opts.Match != nil:
		chunk = max(opts.Limit+1, matchChunk)
	case opts.Limit > 0:
		chunk = opts.Limit + 1
	}
	var lastReturned store.Key
pages:
	for {
		objs, err := q.page(ctx, tx, after, hasAfter, chunk)
		if err != nil {
			return store.ListResult{}, db.readErr("list", err)
		}
		for _, o := range objs {
			after, hasAfter = o.Key, true
			if opts.Match != nil && !opts.Match(o) {
				continue
			}
			if opts.Limit > 0 && len(res.Objects) == opts.Limit {
				res.More = true
				break pages
			}
			res.Objects = append(res.Objects, o)
			lastReturned = o.Key
		}
		if chunk < 0 || len(objs) < chunk {
			break
		}
	}
	if res.More && opts.Match == nil {
		n, err := q.count(ctx, tx, lastReturned)
		if err != nil {
			return store.ListResult{}, db.readErr("list count", err)
		}
		res.Remaining = n
	}
	return res, nil
}

// listQuery reads the objects of one resource, either from objects (revision 0) or as of an
// older revision from changes.
type listQuery struct {
	resource, namespace string
	revision            int64
}

// where returns the conditions selecting the resource's keys (after the key, when hasAfter),
// with their arguments.
func (q listQuery) where(after store.Key, hasAfter bool) (string, []any) {
	cond := `resource = ?`
	args := []any{q.resource}
	if q.revision != 0 {
		cond += ` AND rev <= ?`
		args = append(args, q.revision)
	}
	if q.namespace != "" {
		cond += ` AND namespace = ?`
		args = append(args, q.namespace)
	}
	if hasAfter {
		cond += ` AND (namespace, name) > (?, ?)`
		args = append(args, after.Namespace, after.Name)
	}
	return cond, args
}

// page reads up to limit objects (all when limit < 0) after the key, in list order.
func (q listQuery) page(ctx context.Context, tx *sql.Tx, after store.Key, hasAfter bool, limit int) ([]store.Object, error) {
	cond, args := q.where(after, hasAfter)
	var query string
	if q.revision == 0 {
		query = `SELECT namespace, name, rev, create_rev, value FROM objects WHERE ` + cond +
			` ORDER BY namespace, name LIMIT ?`
	} else {
		// The state at revision R: per key, the latest change at or below R, unless that change
		// is a delete. The GROUP BY walks the index (resource, namespace, name, rev) in key order
		// as a co-routine, so the outer ORDER BY needs no sort and the LIMIT stops it early.
		query = `SELECT c.namespace, c.name, c.rev, c.create_rev, c.value
			FROM (SELECT namespace, name, max(rev) AS rev FROM changes WHERE ` + cond + `
				GROUP BY namespace, name ORDER BY namespace, name) AS k
			JOIN changes AS c ON c.rev = k.rev
			WHERE c.type != 3
			ORDER BY k.namespace, k.name LIMIT ?`
	}
	args = append(args, limit)
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var objs []store.Object
	if limit > 0 {
		objs = make([]store.Object, 0, min(limit, 1024))
	}
	for rows.Next() {
		o := store.Object{Key: store.Key{Resource: q.resource}}
		if err := rows.Scan(&o.Namespace, &o.Name, &o.Revision, &o.CreateRevision, &o.Value); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, rows.Err()
}

// count returns how many objects come after the key.
func (q listQuery) count(ctx context.Context, tx *sql.Tx, after store.Key) (int64, error) {
	cond, args := q.where(after, true)
	query := `SELECT count(*) FROM objects WHERE ` + cond
	if q.revision != 0 {
		query = `SELECT count(*)
			FROM (SELECT max(rev) AS rev FROM changes WHERE ` + cond + ` GROUP BY namespace, name) AS k
			JOIN changes AS c ON c.rev = k.rev
			WHERE c.type != 3`
	}
	var n int64
	err := tx.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

// History returns the changes to one object still in the change log with a revision above
// after, oldest first, each with the state before it when that is still in the log. It returns
// store.ErrClosed after Close, or an error of the database.
func (db *DB) History(ctx context.Context, key store.Key, after int64) ([]store.Event, error) {
	return db.history(ctx, key.Resource, key.Namespace, after, "c.name = ?", key.Name)
}

// HistoryBetween implements store.Interface.
func (db *DB) HistoryBetween(ctx context.Context, key store.Key, after, through int64) ([]store.Event, error) {
	return db.history(ctx, key.Resource, key.Namespace, after, "c.name = ? AND c.rev <= ?", key.Name, through)
}

// HistoryPrefix implements store.Interface.
func (db *DB) HistoryPrefix(ctx context.Context, resource, namespace, prefix string, after, through int64) ([]store.Event, error) {
	cond, args := "1", []any(nil)
	if through > 0 {
		cond, args = "c.rev <= ?", []any{through}
	}
	if prefix == "" {
		return db.history(ctx, resource, namespace, after, cond, args...)
	}
	// Names beginning with prefix sort from prefix up to, not including, prefix with its last
	// byte raised by one (BINARY collation compares the UTF-8 bytes).
	end := []byte(prefix)
	for len(end) > 0 && end[len(end)-1] == 0xff {
		end = end[:len(end)-1]
	}
	if len(end) == 0 {
		return db.history(ctx, resource, namespace, after, cond+" AND c.name >= ?", append(args, prefix)...)
	}
	end[len(end)-1]++
	return db.history(ctx, resource, namespace, after, cond+" AND c.name >= ? AND c.name < ?", append(args, prefix, string(end))...)
}

// history reads the changes of resource in namespace above after whose name matches cond
// (a condition on c.name with its arguments), oldest first.
func (db *DB) history(ctx context.Context, resource, namespace string, after int64, cond string, condArgs ...any) ([]store.Event, error) {
	if db.closed.Load() {
		return nil, store.ErrClosed
	}
	args := append([]any{resource, namespace}, condArgs...)
	args = append(args, after)
	rows, err := db.rdb.QueryContext(ctx, `SELECT `+changeColumns+`
		FROM changes AS c LEFT JOIN changes AS p ON p.rev = c.prev_rev
		WHERE c.resource = ? AND c.namespace = ? AND `+cond+` AND c.rev > ?
		ORDER BY c.rev`, args...)
	if err != nil {
		return nil, db.readErr("history", err)
	}
	defer rows.Close()
	var events []store.Event
	for rows.Next() {
		e, err := scanChange(rows, resource)
		if err != nil {
			return nil, db.readErr("history", err)
		}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, db.readErr("history", err)
	}
	return events, nil
}

// changeColumns are the columns scanChange reads, from changes c joined with its previous row p.
const changeColumns = `c.rev, c.namespace, c.name, c.type, c.create_rev, c.prev_rev, c.value, c.created_at, p.rev, p.value`

// scanChange reads one row of changeColumns as an event.
func scanChange(rows *sql.Rows, resource string) (store.Event, error) {
	var (
		e         store.Event
		typ       int
		prevRev   int64
		createdAt int64
		pRev      sql.NullInt64
		pValue    []byte
	)
	o := &e.Object
	o.Resource = resource
	if err := rows.Scan(&o.Revision, &o.Namespace, &o.Name, &typ, &o.CreateRevision, &prevRev, &o.Value,
		&createdAt, &pRev, &pValue); err != nil {
		return store.Event{}, err
	}
	e.Type = store.EventType(typ)
	e.Time = time.Unix(0, createdAt)
	if pRev.Valid {
		e.Prev = &store.Object{Key: o.Key, Revision: prevRev, CreateRevision: o.CreateRevision, Value: pValue}
	}
	return e, nil
}

// readChanges reads, in one read transaction, up to limit changes of the watched resource (and
// namespace) with a revision above after. It returns the current revision of the snapshot it
// read, a *store.CompactedError when after is below the compacted revision, or an error of the
// database.
func (db *DB) readChanges(ctx context.Context, opts store.WatchOptions, after int64, limit int) (events []store.Event, current int64, err error) {
	tx, err := db.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("begin read: %w", db.noteDamage(err))
	}
	defer func() { _ = tx.Rollback() }()
	current, compacted, err := readRevisions(ctx, tx)
	if err != nil {
		return nil, 0, fmt.Errorf("read revision: %w", db.noteDamage(err))
	}
	if after < compacted {
		return nil, current, &store.CompactedError{Requested: after, Compacted: compacted}
	}
	// The unary + keeps the planner on the rowid range, which is in revision order and stops at
	// the LIMIT, rather than the key index, which would read every change of the resource.
	query := `SELECT ` + changeColumns + `
		FROM changes AS c LEFT JOIN changes AS p ON p.rev = c.prev_rev
		WHERE c.rev > ? AND +c.resource = ?`
	args := []any{after, opts.Resource}
	if opts.Namespace != "" {
		query += ` AND +c.namespace = ?`
		args = append(args, opts.Namespace)
	}
	query += ` ORDER BY c.rev LIMIT ?`
	args = append(args, limit)
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("read changes: %w", db.noteDamage(err))
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanChange(rows, opts.Resource)
		if err != nil {
			return nil, 0, fmt.Errorf("read changes: %w", db.noteDamage(err))
		}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read changes: %w", db.noteDamage(err))
	}
	return events, current, nil
}
