package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"
)

// SessionCookie is the browser session a join link sets.
const SessionCookie = "leaselab_session"

// bearerProtocolPrefix is the WebSocket subprotocol that carries a bearer token (browsers cannot
// set Authorization on a WebSocket).
const bearerProtocolPrefix = "base64url.bearer.authorization.k8s.io."

// How a request authenticated.
const (
	viaBearer    = "bearer"
	viaWebSocket = "websocket"
	viaCookie    = "cookie"
)

// Errors of authentication; every one is answered 401.
var (
	errInvalidToken   = errors.New("invalid bearer token")
	errBadProtocol    = errors.New("invalid base64.bearer.authorization token")
	errInvalidSession = errors.New("invalid or expired session")
)

// Authenticator maps bearer tokens to identities. Tokens are kept only as SHA-256 hashes.
type Authenticator struct {
	users map[[32]byte]User
	// sessions are the browser sessions the session cookie names; nil takes no cookie.
	sessions *sessions
}

// NewAuthenticator returns an Authenticator for tokens.
func NewAuthenticator(tokens []Token) *Authenticator {
	a := &Authenticator{users: make(map[[32]byte]User, len(tokens))}
	for _, t := range tokens {
		a.users[sha256.Sum256([]byte(t.Token))] = t.User
	}
	return a
}

// Lookup returns the identity of a token.
func (a *Authenticator) Lookup(token string) (User, bool) {
	if token == "" {
		return User{}, false
	}
	u, ok := a.users[sha256.Sum256([]byte(token))]
	return u, ok
}

// Authenticate finds the identity of a request: the Authorization bearer header, then (for a
// WebSocket upgrade) the bearer-token subprotocol, then the session cookie. found is false
// when the request carries no credentials at all; err is set when it carries bad ones.
// A valid subprotocol token is removed from the request's Sec-WebSocket-Protocol header, as the
// real authenticator does.
func (a *Authenticator) Authenticate(r *http.Request) (u User, via string, found bool, err error) {
	if tok, ok := BearerToken(r.Header.Get("Authorization")); ok {
		u, ok := a.Lookup(tok)
		if !ok {
			return User{}, viaBearer, true, errInvalidToken
		}
		return u, viaBearer, true, nil
	}
	if isWebSocketUpgrade(r) {
		tok, filtered, ok, perr := WebSocketToken(r.Header.Values("Sec-WebSocket-Protocol"))
		if perr != nil {
			return User{}, viaWebSocket, true, perr
		}
		if ok {
			u, ok := a.Lookup(tok)
			if !ok {
				return User{}, viaWebSocket, true, errInvalidToken
			}
			r.Header.Set("Sec-WebSocket-Protocol", strings.Join(filtered, ","))
			return u, viaWebSocket, true, nil
		}
	}
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		u, ok := a.sessionUser(r.Context(), c.Value)
		if !ok {
			return User{}, viaCookie, true, errInvalidSession
		}
		return u, viaCookie, true, nil
	}
	return User{}, "", false, nil
}

// sessionUser returns the identity of a browser session: that of the token it was opened with,
// while that token is still one of the server's.
func (a *Authenticator) sessionUser(ctx context.Context, id string) (User, bool) {
	if a.sessions == nil {
		return User{}, false
	}
	tok, ok := a.sessions.token(ctx, id)
	if !ok {
		return User{}, false
	}
	u, ok := a.users[tok]
	return u, ok
}

// BearerToken extracts the token of an Authorization header as kube-apiserver does: "Bearer"
// (any case), one space, a non-empty token without spaces. Anything else is no token.
func BearerToken(header string) (string, bool) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", false
	}
	parts := strings.SplitN(header, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

// WebSocketToken finds the bearer-token subprotocol among the offered ones (each header value a
// comma-separated list). It returns the token, the other subprotocols, and whether a token was
// offered. As the real server, it fails on two token entries, bad base64url (unpadded), a token
// that is not UTF-8 or empty, and a token offered without another subprotocol.
func WebSocketToken(headers []string) (token string, filtered []string, ok bool, err error) {
	for _, h := range headers {
		for _, p := range strings.Split(h, ",") {
			p = strings.TrimSpace(p)
			if !strings.HasPrefix(p, bearerProtocolPrefix) {
				if p != "" {
					filtered = append(filtered, p)
				}
				continue
			}
			if ok {
				return "", nil, false, errors.New("multiple base64.bearer.authorization tokens specified")
			}
			ok = true
			b, derr := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(p, bearerProtocolPrefix))
			if derr != nil {
				return "", nil, false, errors.New("invalid base64.bearer.authorization token encoding")
			}
			if !utf8.Valid(b) {
				return "", nil, false, errBadProtocol
			}
			token = string(b)
		}
	}
	if !ok {
		return "", filtered, false, nil
	}
	if token == "" {
		return "", nil, false, errBadProtocol
	}
	if len(filtered) == 0 {
		return "", nil, false, errors.New("missing additional subprotocol")
	}
	return token, filtered, true, nil
}

func isWebSocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

type userKey struct{}

// WithUser returns ctx carrying u.
func WithUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the identity of the request whose context is ctx; false when the server runs
// without authentication (everyone may do everything).
func UserFrom(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(userKey{}).(User)
	return u, ok
}
