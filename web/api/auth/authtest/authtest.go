// Package authtest holds what tests of the server's authentication need and the server does
// not: a client's side of the WebSocket bearer token.
package authtest

import "encoding/base64"

// bearerProtocolPrefix is the WebSocket subprotocol that carries a bearer token, as Kubernetes
// clients offer it. Package auth has its own copy to read it; its tests, which encode with this
// package, fail when the two disagree.
const bearerProtocolPrefix = "base64url.bearer.authorization.k8s.io."

// EncodeWebSocketToken returns the subprotocol that carries token.
func EncodeWebSocketToken(token string) string {
	return bearerProtocolPrefix + base64.RawURLEncoding.EncodeToString([]byte(token))
}
