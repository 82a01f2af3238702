// Package sqlite implements store.Interface on a single SQLite file (modernc.org/sqlite, no cgo).
//
// The table changes is the change log and its AUTOINCREMENT rowid is the global revision; the
// table objects holds the current state. All writes go through one goroutine that commits every
// pending request in one IMMEDIATE transaction (group commit), answers the callers only after
// the commit returned, and then feeds the watch hub. Reads use a separate pool of connections,
// which WAL mode lets run next to the writer.
//
// The Value of an object returned by a write, and of an event, is shared with the watches:
// callers must treat it as read-only.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/leaselab/leaselab/store"
)

var _ store.Interface = (*DB)(nil)

// Defaults for the zero values of Options.
const (
	DefaultCompactKeep     = 100000
	DefaultCompactMaxAge   = 24 * time.Hour
	DefaultCompactInterval = time.Minute
	DefaultWatchQueue      = 1024
)

// Attribute keys of the log records this package writes.
const (
	logKeyPath      = "path"
	logKeyRevision  = "revision"
	logKeyCompacted = "compacted"
	logKeyMigration = "migration"
	logKeyOps       = "ops"
	logKeyFailed    = "failed"
	logKeyDeleted   = "deleted"
	logKeyDuration  = "duration"
	logKeyResource  = "resource"
	logKeyNamespace = "namespace"
	logKeyAfter     = "after"
	logKeyError     = "error"
)

// maxBatch caps the writes committed in one transaction.
const maxBatch = 256

// Options tunes a DB. The zero value uses the defaults.
type Options struct {
	// CompactKeep is how many of the latest revisions compaction leaves whole; older changes are
	// compacted. 0 means DefaultCompactKeep.
	CompactKeep int64
	// CompactMaxAge is the age after which changes are compacted even when fewer than
	// CompactKeep revisions are newer. 0 means DefaultCompactMaxAge.
	CompactMaxAge time.Duration
	// CompactInterval is how often compaction runs in the background: 0 means
	// DefaultCompactInterval, a negative value never (Compact can still be called).
	CompactInterval time.Duration
	// WatchQueue is how many events a watch may have waiting before it is closed with
	// store.ErrWatcherTooSlow. 0 means DefaultWatchQueue.
	WatchQueue int
	// Now is the clock for change timestamps and age-based compaction; nil means time.Now.
	Now func() time.Time
	// AcceptRollback opens a database that is behind the revision it acknowledged (its -wal
	// file lost, say) instead of refusing it with ErrRolledBack; new writes then continue after
	// the acknowledged revision.
	AcceptRollback bool
}

func (o Options) withDefaults() Options {
	if o.CompactKeep <= 0 {
		o.CompactKeep = DefaultCompactKeep
	}
	if o.CompactMaxAge <= 0 {
		o.CompactMaxAge = DefaultCompactMaxAge
	}
	if o.CompactInterval == 0 {
		o.CompactInterval = DefaultCompactInterval
	}
	if o.WatchQueue <= 0 {
		o.WatchQueue = DefaultWatchQueue
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// DB is the SQLite store. It is safe for concurrent use.
type DB struct {
	path   string
	opts   Options
	logger *slog.Logger

	// wdb has exactly one connection, used by the writer goroutine and compaction; its
	// transactions begin IMMEDIATE. rdb is the pool for reads.
	wdb *sql.DB
	rdb *sql.DB

	getStmt *sql.Stmt // on rdb
	w       writeStmts
	lock    *os.File // held open while the store is (lockFile)

	writes     chan *writeOp
	writerDone chan struct{}
	acks       chan *ackBatch // committed batches, from the writer to the acknowledger (ack.go)
	commits    atomic.Int64   // transactions the writer committed, for the benchmarks' writes per commit

	hub    *hub
	latest *latest // current objects for Get, kept by the writer

	compactMu sync.Mutex
	// damage is the first error that found the file damaged (noteDamage).
	damage atomic.Pointer[error]
	// writeFailure is why the last commit failed, nil once one succeeds (health.go).
	writeFailure atomic.Pointer[error]
	// rec is the revision record beside the database (acked.go): the writer raises its
	// reservation, the acknowledger (ack.go) records each acknowledged revision.
	rec *recorder
	// walLost is set at start when the store was not closed cleanly and its -wal file is
	// gone: damage found then is worded as the lost file's (damage.go).
	walLost bool

	closed    atomic.Bool
	ctx       context.Context // ends when Close starts
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating it 0600 if needed) the database at path, applies pending migrations and
// starts the writer and, unless disabled, background compaction. It returns an error when the
// file cannot be opened or a migration fails. A nil logger discards logs.
func Open(ctx context.Context, path string, opts Options, logger *slog.Logger) (*DB, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	db := &DB{
		path:       path,
		opts:       opts.withDefaults(),
		logger:     logger,
		writes:     make(chan *writeOp, 4*maxBatch),
		writerDone: make(chan struct{}),
		acks:       make(chan *ackBatch, ackQueue),
	}
	db.hub = newHub(db.opts.WatchQueue)
	db.latest = newLatest()
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if err := createPrivate(path); err != nil {
		return nil, fmt.Errorf("create database: %w", err)
	}
	lock, err := lockFile(path)
	if err != nil {
		return nil, err
	}
	db.lock = lock
	db.walLost = walLost(path)
	if err := db.open(ctx); err != nil {
		db.closeDBs()
		return nil, err
	}
	current, compacted, err := db.Revision(ctx)
	if err == nil {
		current, err = db.startRevision(ctx, current)
	}
	if err == nil {
		db.rec, err = createRecord(path, revisionRecord{acked: current, reserved: current})
		if err != nil {
			err = fmt.Errorf("record the acknowledged revision in %s: %w", ackedPath(path), err)
		}
	}
	if err != nil {
		db.closeDBs()
		return nil, err
	}
	db.ctx, db.cancel = context.WithCancel(context.Background())
	db.wg.Add(2)
	go func() {
		defer db.wg.Done()
		db.writeLoop()
	}()
	go func() {
		defer db.wg.Done()
		db.ackLoop()
	}()
	if db.opts.CompactInterval > 0 {
		db.wg.Add(1)
		go func() {
			defer db.wg.Done()
			db.compactLoop()
		}()
	}
	logger.Info("store opened", slog.String(logKeyPath, path),
		slog.Int64(logKeyRevision, current), slog.Int64(logKeyCompacted, compacted))
	return db, nil
}

func (db *DB) open(ctx context.Context) error {
	var err error
	// The writer: one connection, IMMEDIATE transactions so that the write lock is taken at
	// BEGIN, WAL so that readers never block it, synchronous=FULL so that a commit is on disk
	// (WAL fsynced) before it returns.
	db.wdb, err = sql.Open("sqlite", dsn(db.path, true))
	if err != nil {
		return fmt.Errorf("open writer: %w", err)
	}
	db.wdb.SetMaxOpenConns(1)
	db.wdb.SetMaxIdleConns(1)
	db.wdb.SetConnMaxLifetime(0)
	db.wdb.SetConnMaxIdleTime(0)
	if err := db.wdb.PingContext(ctx); err != nil {
		if isDamage(err) {
			return db.damagedAtStart(err)
		}
		return fmt.Errorf("open %s: %w", db.path, err)
	}
	if err := db.checkIntegrity(ctx); err != nil {
		return err
	}
	if err := db.migrate(ctx); err != nil {
		if isDamage(err) {
			return db.damagedAtStart(err)
		}
		return err
	}

	// Opened only after the migrations so that every reader sees the WAL file mode and schema.
	db.rdb, err = sql.Open("sqlite", dsn(db.path, false))
	if err != nil {
		return fmt.Errorf("open readers: %w", err)
	}
	readers := max(4, runtime.GOMAXPROCS(0))
	db.rdb.SetMaxOpenConns(readers)
	db.rdb.SetMaxIdleConns(readers)
	db.rdb.SetConnMaxLifetime(0)
	db.rdb.SetConnMaxIdleTime(0)

	if db.getStmt, err = db.rdb.PrepareContext(ctx, sqlGet); err != nil {
		return fmt.Errorf("prepare get: %w", err)
	}
	if err := db.w.prepare(ctx, db.wdb); err != nil {
		return err
	}
	return nil
}

// createPrivate creates the database file 0600 when it does not exist yet: it holds workshop
// tokens, and SQLite would create it 0644 (less the umask). SQLite gives the -wal, -shm and
// journal files the main file's mode. An existing file keeps the mode its owner chose.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// dsn builds the driver's data source name: a file: URI (so that any path is escaped) with the
// driver's pragma parameters.
func dsn(path string, writer bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	if writer {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath(), RawQuery: q.Encode()}
	return u.String()
}

// Close stops compaction and the writer (writes not yet taken fail with store.ErrClosed), ends
// every watch with a nil Err and closes the database. It is safe to call more than once; later
// calls return the first call's result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.closed.Store(true)
		db.cancel()
		db.wg.Wait()
		db.hub.close()
		db.recordClean()
		// A Compact called by a user stops at its next batch; wait for it.
		db.compactMu.Lock()
		defer db.compactMu.Unlock()
		db.closeErr = db.closeDBs()
		db.logger.Info("store closed", slog.String(logKeyPath, db.path))
	})
	return db.closeErr
}

func (db *DB) closeDBs() error {
	var errs []error
	if db.getStmt != nil {
		errs = append(errs, db.getStmt.Close())
	}
	errs = append(errs, db.w.close(), db.rec.close())
	if db.rdb != nil {
		errs = append(errs, db.rdb.Close())
	}
	if db.wdb != nil {
		errs = append(errs, db.wdb.Close())
	}
	if db.lock != nil {
		errs = append(errs, db.lock.Close()) // after SQLite's descriptors: see lockFile
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrate applies the embedded migrations that are not yet recorded in schema_migrations, in
// the order of their number, each in its own transaction.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.wdb.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	type migration struct {
		version int64
		name    string
	}
	var ms []migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || v <= 0 {
			return fmt.Errorf("migration %s: name must start with a positive number and '_'", base)
		}
		ms = append(ms, migration{version: v, name: base})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return fmt.Errorf("migrations %s and %s share a number", ms[i-1].name, ms[i].name)
		}
	}
	for _, m := range ms {
		applied, err := db.applyMigration(ctx, m.version, m.name)
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if applied {
			db.logger.Info("migration applied", slog.String(logKeyPath, db.path), slog.String(logKeyMigration, m.name))
		}
	}
	return nil
}

func (db *DB) applyMigration(ctx context.Context, version int64, name string) (applied bool, err error) {
	tx, err := db.wdb.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
		return false, fmt.Errorf("check: %w", err)
	}
	if n > 0 {
		return false, tx.Rollback()
	}
	text, err := migrationFS.ReadFile("migrations/" + name)
	if err != nil {
		return false, fmt.Errorf("read: %w", err)
	}
	if _, err := tx.ExecContext(ctx, string(text)); err != nil {
		return false, fmt.Errorf("exec: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		version, name, db.opts.Now().UnixNano()); err != nil {
		return false, fmt.Errorf("record: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("commit: %w", err)
	}
	return true, nil
}

// sqliteCode returns the extended result code of a SQLite error, or 0 when err is not one.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

// isConstraint reports whether err is a constraint violation: a failure of one statement that
// says nothing about the health of the database.
func isConstraint(err error) bool {
	return sqliteCode(err)&0xff == sqlite3.SQLITE_CONSTRAINT
}

// translate maps the SQLite errors that have a meaning in the store's vocabulary; others are
// returned unchanged.
func translate(err error) error {
	switch sqliteCode(err) {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return store.ErrExists
	}
	return err
}

// readErr wraps an error of a read, reporting store.ErrClosed when the store was closed under
// the read.
func (db *DB) readErr(what string, err error) error {
	if db.closed.Load() && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return store.ErrClosed
	}
	return fmt.Errorf("%s: %w", what, db.noteDamage(err))
}
