package discovery

import (
	"net/http"
	"strings"

	"github.com/leaselab/leaselab/web/api/mediatype"
)

// etagMatches reports whether an If-None-Match header matches the quoted entity tag etag,
// using the weak comparison RFC 9110 prescribes for If-None-Match.
func etagMatches(ifNoneMatch, etag string) bool {
	for _, tag := range mediatype.SplitList(ifNoneMatch) {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}

// setNoCache marks a response the way the real API server marks everything it does not
// explicitly allow caches to keep.
func setNoCache(h http.Header) {
	h.Set("Cache-Control", "no-cache, private")
}
