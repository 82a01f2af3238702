package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/leaselab/leaselab/store"
)

// SessionResource is the store resource browser sessions are kept under. The API does not
// serve it.
//
// A join link's token is a bearer credential for the API too, so the session cookie does not
// carry it: a cookie leaks more easily (a shared browser profile, a proxy log, a support
// screenshot of the developer tools) and, unlike the token, expires. The cookie carries a
// random session id instead. The sessions are kept in the database so that a restart in the
// middle of a workshop (an upgrade, a crash) does not sign every browser out, and only a
// SHA-256 hash of each id is kept, as passwords are: the database of a server with a token
// file holds no credential, and a copy of any database (a backup, a shared file) signs no
// browser in. A session names the hash of the token it was opened with, so that it ends with
// that token (a token file without it after a restart).
const SessionResource = "sessions.leaselab.dev"

// sessionTTL is how long a session lasts, as its cookie.
const sessionTTL = 7 * 24 * time.Hour

// session is the stored form of a browser session.
type session struct {
	// Token is the hex SHA-256 of the token the session was opened with.
	Token   string `json:"token"`
	Expires int64  `json:"expires"` // Unix seconds
}

// sessions opens and finds browser sessions, read through from the store: a session opened
// before a restart is read on its first use.
type sessions struct {
	log *slog.Logger
	st  store.Interface
	now func() time.Time

	mu   sync.Mutex
	byID map[[32]byte]session // by the hash of the session id
}

func newSessions(logger *slog.Logger, st store.Interface, now func() time.Time) *sessions {
	return &sessions{log: logger, st: st, now: now, byID: map[[32]byte]session{}}
}

// open starts a session for token and returns its id, the cookie's value. A store that cannot
// keep it (a read-only one) leaves it in memory: it lasts until the server stops.
func (s *sessions) open(ctx context.Context, token string) (string, error) {
	id, err := newToken()
	if err != nil {
		return "", err
	}
	tok := sha256.Sum256([]byte(token))
	sess := session{Token: hex.EncodeToString(tok[:]), Expires: s.now().Add(sessionTTL).Unix()}
	h := sha256.Sum256([]byte(id))
	s.mu.Lock()
	s.byID[h] = sess
	s.mu.Unlock()
	b, _ := json.Marshal(sess) // a struct of a string and a number always encodes
	if _, err := s.st.Create(ctx, s.key(h), b); err != nil {
		s.log.Warn("browser session kept in memory only: a restart will sign it out", slog.Any("error", err))
	}
	s.prune(ctx)
	return id, nil
}

// token returns the hash of the token of the session id, false for no live session.
func (s *sessions) token(ctx context.Context, id string) ([32]byte, bool) {
	h := sha256.Sum256([]byte(id))
	s.mu.Lock()
	sess, ok := s.byID[h]
	s.mu.Unlock()
	if !ok {
		if sess, ok = s.load(ctx, h); !ok {
			return [32]byte{}, false
		}
	}
	var tok [32]byte
	n, err := hex.Decode(tok[:], []byte(sess.Token))
	if s.now().Unix() >= sess.Expires || err != nil || n != len(tok) {
		s.end(ctx, h)
		return [32]byte{}, false
	}
	return tok, true
}

// load reads a session from the store into memory.
func (s *sessions) load(ctx context.Context, h [32]byte) (session, bool) {
	o, err := s.st.Get(ctx, s.key(h))
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("read a browser session", slog.Any("error", err))
		}
		return session{}, false
	}
	var sess session
	if err := json.Unmarshal(o.Value, &sess); err != nil {
		return session{}, false
	}
	s.mu.Lock()
	s.byID[h] = sess
	s.mu.Unlock()
	return sess, true
}

// end forgets a session.
func (s *sessions) end(ctx context.Context, h [32]byte) {
	s.mu.Lock()
	delete(s.byID, h)
	s.mu.Unlock()
	if _, err := s.st.Delete(ctx, s.key(h), 0); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Debug("delete a browser session", slog.Any("error", err))
	}
}

// prune removes the expired sessions from the store, so that they do not pile up over
// workshops; a failure leaves them for the next session opened.
func (s *sessions) prune(ctx context.Context) {
	res, err := s.st.List(ctx, store.ListOptions{Resource: SessionResource})
	if err != nil {
		return
	}
	now := s.now().Unix()
	for _, o := range res.Objects {
		var sess session
		if json.Unmarshal(o.Value, &sess) == nil && now >= sess.Expires {
			s.st.Delete(ctx, o.Key, o.Revision)
		}
	}
}

// key is where the session whose id hashes to h is stored.
func (s *sessions) key(h [32]byte) store.Key {
	return store.Key{Resource: SessionResource, Name: hex.EncodeToString(h[:])}
}
