package elector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"k8s.io/client-go/rest"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// viewReporter tells a leaselab server this candidate's own view of its lease — its role, the
// leader it last saw, its newest decision — over the tab hub's WebSocket, as a browser tab
// does: the server records it beside the lease's history (its split-brain checks compare it
// with the record) and lists the candidate on its dashboard. Against a server that has no tab
// hub (a real cluster) it says so once and stops.
type viewReporter struct {
	mu      sync.Mutex
	rep     tabproto.Report
	flights tabproto.Flights // its requests on the lease (flights.go)
	changed chan struct{}
}

func newViewReporter(identity, namespace, lease string) *viewReporter {
	v := &viewReporter{changed: make(chan struct{}, 1)}
	v.rep = tabproto.Report{Identity: identity, Namespace: namespace, Lease: lease,
		State: tabproto.StateFollower, Role: tabproto.RoleFollower, ActiveFaults: []string{}, Native: true}
	v.rep.RoleSince = time.Now().UnixMilli()
	return v
}

// update changes the view; role, when not nil, is the new role (dated now).
func (v *viewReporter) update(role *tabproto.Role, holder *string, kind, text string) {
	now := time.Now()
	v.mu.Lock()
	if role != nil && *role != v.rep.Role {
		v.rep.Role = *role
		v.rep.RoleSince = now.UnixMilli()
		v.rep.State = tabproto.StateFollower
		switch *role {
		case tabproto.RoleLeader:
			v.rep.State = tabproto.StateLeader
		case tabproto.RoleNone:
			v.rep.State = tabproto.StateStopped
		}
	}
	if holder != nil {
		v.rep.Holder = *holder
	}
	v.rep.LastLog = tabproto.LogLine{At: now.UnixMilli(), Kind: kind, Text: text}
	v.mu.Unlock()
	v.poke()
}

// poke tells the sender that the view changed.
func (v *viewReporter) poke() {
	select {
	case v.changed <- struct{}{}:
	default:
	}
}

func (v *viewReporter) report() tabproto.Report {
	v.mu.Lock()
	defer v.mu.Unlock()
	r := v.rep
	r.Clock = time.Now().UnixMilli()
	r.Flights = v.flights.List()
	return r
}

// Reconnection delays.
const (
	viewRetryMin = time.Second
	viewRetryMax = 30 * time.Second
)

// run keeps reporting until ctx ends, reconnecting after a lost connection.
func (v *viewReporter) run(ctx context.Context, cfg *rest.Config, say func(string, ...any)) {
	wait := viewRetryMin
	for ctx.Err() == nil {
		conn, err := dialTabHub(ctx, cfg)
		var notHub *notTabHubError
		switch {
		case errors.As(err, &notHub):
			say("not reporting its view: %v", err)
			return
		case err != nil:
			if ctx.Err() == nil {
				say("view not reported: %v (again in %v)", err, wait)
			}
		default:
			wait = viewRetryMin
			err = v.send(ctx, conn)
			conn.CloseNow()
			if ctx.Err() == nil {
				say("view not reported: %v (again in %v)", err, wait)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, viewRetryMax)
	}
}

// send sends the view now and after every change, until the connection fails or ctx ends. The
// hub's messages (its hello, fault commands for browser tabs) are read and ignored.
func (v *viewReporter) send(ctx context.Context, conn *websocket.Conn) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		for {
			if _, _, err := conn.Read(ctx); err != nil {
				cancel(err)
				return
			}
		}
	}()
	for {
		msg, err := tabproto.EncodeReport(v.report())
		if err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = conn.Write(wctx, websocket.MessageText, msg)
		cancel()
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-v.changed:
		}
	}
}

// notTabHubError says the server answered, but is not a leaselab server with a tab hub.
type notTabHubError struct{ server, status string }

func (e *notTabHubError) Error() string {
	return fmt.Sprintf("%s has no leaselab tab hub (%s)", e.server, e.status)
}

// dialTabHub opens the tab hub's WebSocket with the client's credentials (token, client
// certificate, exec plugin: whatever the rest.Config carries) over HTTP/1.1.
func dialTabHub(ctx context.Context, cfg *rest.Config) (*websocket.Conn, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "" {
		u, err = url.Parse("http://" + cfg.Host)
		if err != nil {
			return nil, err
		}
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/ui/tabs/connect"
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	rt, err := rest.HTTPWrappersForConfig(cfg, &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment})
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{HTTPClient: &http.Client{Transport: rt}})
	if err != nil && resp != nil && resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden &&
		resp.StatusCode < http.StatusInternalServerError {
		return nil, &notTabHubError{server: cfg.Host, status: resp.Status}
	}
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(64 << 10)
	return conn, nil
}
