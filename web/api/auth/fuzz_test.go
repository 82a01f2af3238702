package auth

import (
	"net/http"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/web/api/auth/authtest"
)

// FuzzParseTokenFile: any token file either parses into identities that authenticate with
// their token, or is refused with an error; never a panic.
func FuzzParseTokenFile(f *testing.F) {
	for _, s := range []string{
		"t1,alice,uid-1,\"leaselab:instructors,dev\"\n",
		"t2,bob,uid-2\n,skipped,3\n",
		"t4,carol,uid-4,\"g1,g2\",extra\nt4,carol,uid-5\n",
		"t1,alice\n",
		"\"t1,alice,1\n",
		"\ufefft,x,1\n",
		"t,a b,1\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		toks, err := ParseTokenFile(strings.NewReader(in))
		if err != nil {
			return
		}
		a := NewAuthenticator(toks)
		for _, tok := range toks {
			if tok.Token == "" {
				t.Fatalf("empty token parsed from %q", in)
			}
			u, ok := a.Lookup(tok.Token)
			if !ok || u.Name != tok.User.Name {
				t.Fatalf("token %q does not authenticate %q", tok.Token, tok.User.Name)
			}
			if u.Role == RoleParticipant && u.Namespace == "" {
				t.Fatalf("participant %q without a namespace", u.Name)
			}
		}
	})
}

// FuzzWebSocketToken: any Sec-WebSocket-Protocol header either yields a token that encodes back
// back to itself, with the token entry filtered out, or an error; never a panic.
func FuzzWebSocketToken(f *testing.F) {
	for _, s := range []string{
		authtest.EncodeWebSocketToken("s3cret") + ", leaselab.watch",
		"a, " + authtest.EncodeWebSocketToken("x"),
		authtest.EncodeWebSocketToken("x"),
		authtest.EncodeWebSocketToken("x") + "," + authtest.EncodeWebSocketToken("y") + ",a",
		bearerProtocolPrefix + "!!!,a",
		bearerProtocolPrefix + "_w,a",
		bearerProtocolPrefix + ",a",
		"a,,b",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		token, filtered, ok, err := WebSocketToken([]string{header})
		if err != nil {
			if ok || token != "" {
				t.Fatalf("%q: error %v with a token", header, err)
			}
			return
		}
		for _, p := range filtered {
			if strings.HasPrefix(p, bearerProtocolPrefix) || p == "" {
				t.Fatalf("%q: filtered keeps %q", header, p)
			}
		}
		if !ok {
			return
		}
		if token == "" || len(filtered) == 0 {
			t.Fatalf("%q: token %q with %q", header, token, filtered)
		}
		// base64.RawURLEncoding (as kube-apiserver's) accepts non-zero trailing bits, so the
		// token need not encode back to the same text; it must round-trip itself.
		if back, _, ok2, err := WebSocketToken([]string{authtest.EncodeWebSocketToken(token) + ",a"}); err != nil || !ok2 || back != token {
			t.Fatalf("%q: token %q does not round-trip: %q %v", header, token, back, err)
		}
		// The whole authenticator takes the same header on an upgrade request.
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Upgrade", "websocket")
		r.Header.Set("Connection", "Upgrade")
		r.Header.Set("Sec-WebSocket-Protocol", header)
		a := NewAuthenticator([]Token{{Token: token, User: User{Name: "u"}}})
		if u, _, found, err := a.Authenticate(r); err != nil || !found || u.Name != "u" {
			t.Fatalf("%q: authenticate: %v %v %v", header, u, found, err)
		}
		if strings.Contains(r.Header.Get("Sec-WebSocket-Protocol"), bearerProtocolPrefix) {
			t.Fatalf("%q: the token stays in the header", header)
		}
	})
}

// FuzzBearerToken: any Authorization header is a token without spaces or none.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  abc", "Basic Zm9v", "Bearer", "", " Bearer x y "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := BearerToken(h)
		if ok != (tok != "") || strings.Contains(tok, " ") {
			t.Fatalf("%q: %q %v", h, tok, ok)
		}
	})
}
