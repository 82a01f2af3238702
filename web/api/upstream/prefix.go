package upstream

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/web/api/status"
)

// MirrorPrefix is where the browser screens read the mirror: /ui/mirror/apis/... is the local
// API's answer for /apis/..., read-only. The pages are rendered at the local store's
// resourceVersions, so their watches resume from the mirror, not from the cluster.
const MirrorPrefix = "/ui/mirror"

type mirrorKey struct{}

// mirrorRead says whether a request is a screen's read of the mirror.
func mirrorRead(ctx context.Context) bool {
	v, _ := ctx.Value(mirrorKey{}).(bool)
	return v
}

// MirrorReads is the Echo pre-routing middleware that serves MirrorPrefix: it takes the prefix
// off the path, so that the local API handlers answer, and marks the request so that the
// Forwarder lets it through. Only reads are served: the mirror is written by the cluster's
// changes alone.
func MirrorReads(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		rest, ok := strings.CutPrefix(r.URL.Path, MirrorPrefix)
		if !ok || !apiPath(rest) {
			return next(c)
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			c.Response().Header().Set("Allow", "GET, HEAD")
			status.Write(c.Response(), r, status.MethodNotAllowed(schema.GroupResource{}, "",
				r.Method+" "+r.URL.Path+" is not allowed: the screens' view of the cluster is read-only; write through "+rest), status.Filter)
			return nil
		}
		r = r.WithContext(context.WithValue(r.Context(), mirrorKey{}, true))
		r.URL.Path = rest
		if r.URL.RawPath != "" {
			r.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, MirrorPrefix)
		}
		r.RequestURI = r.URL.RequestURI()
		c.SetRequest(r)
		return next(c)
	}
}
