package outage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/web/api/request"
)

// TestOutage: a failing outage answers the resource requests it covers with 503 at once, a
// hanging one holds them until it ends, a namespace's covers that namespace only, and the
// screens' requests never wait.
func TestOutage(t *testing.T) {
	var f Fault
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			c.SetRequest(r.WithContext(request.WithInfo(r.Context(), request.Parse(r))))
			return next(c)
		}
	})
	e.Use(f.Middleware)
	e.Any("/*", func(c echo.Context) error { return c.String(http.StatusOK, "served") })
	do := func(path string) chan int {
		done := make(chan int, 1)
		go func() {
			rec := httptest.NewRecorder()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil).WithContext(ctx))
			done <- rec.Code
		}()
		return done
	}
	const a, b, screen = "/apis/coordination.k8s.io/v1/namespaces/a/leases/x", "/apis/coordination.k8s.io/v1/namespaces/b/leases/x", "/scenarios"
	if got := <-do(a); got != 200 {
		t.Fatalf("no outage: %d", got)
	}
	f.Set(State{Mode: Fail})
	if got := <-do(a); got != http.StatusServiceUnavailable {
		t.Errorf("failing outage: %d, want 503", got)
	}
	if got := <-do(screen); got != 200 {
		t.Errorf("a screen during the outage: %d", got)
	}
	f.Set(State{Mode: Hang, Namespace: "a"})
	if got := <-do(b); got != 200 {
		t.Errorf("another namespace during a's outage: %d", got)
	}
	held := do(a)
	select {
	case got := <-held:
		t.Fatalf("a request in a's hanging outage returned %d", got)
	case <-time.After(100 * time.Millisecond):
	}
	f.Set(State{})
	if got := <-held; got != 200 {
		t.Errorf("the held request after the outage: %d", got)
	}
}
