package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

const (
	// tabReportEvery is how often a candidate tab's page reports to the hub at most (play.js).
	tabReportEvery = 250 * time.Millisecond
	// wsTimeout bounds a WebSocket's dial and each of its writes.
	wsTimeout = 15 * time.Second
	// maxPendingReports bounds the reports of a tab waiting for the instructor's dashboard.
	maxPendingReports = 64
)

// leaseWrites are the writes of one lease: when each PUT started, in order. Dashboards match
// the lease cards they receive against them.
type leaseWrites struct {
	mu     sync.Mutex
	starts []int64 // unix nanoseconds
}

func (l *leaseWrites) add(t time.Time) {
	l.mu.Lock()
	l.starts = append(l.starts, t.UnixNano())
	l.mu.Unlock()
}

// deliver moves *cursor past the writes that started no later than until (unix nanoseconds)
// and calls f with each one's start.
func (l *leaseWrites) deliver(cursor *int, until int64, f func(start int64)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for *cursor < len(l.starts) && l.starts[*cursor] <= until {
		f(l.starts[*cursor])
		*cursor++
	}
}

// missing counts the writes from cursor on that started in [from, to).
func (l *leaseWrites) missing(cursor int, from, to int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, s := range l.starts[min(cursor, len(l.starts)):] {
		if s >= from && s < to {
			n++
		}
	}
	return n
}

// simTab is one candidate tab: the browser candidate (wasm/candidate's Worker, natively) with
// its page's link to the tab hub, which passes the candidate's reports on at most every
// tabReportEvery and its commands back.
type simTab struct {
	w           *workshopRun
	participant WorkshopParticipant
	identity    string
	namespace   string
	lease       string
	writes      *leaseWrites

	leading   chan struct{} // closed when the tab first leads
	leadOnce  sync.Once
	started   chan struct{} // closed when the tab's candidate first reports
	startOnce sync.Once
	failed    chan error // the setup's failure, once
	wasLeader atomic.Bool
	lostLead  atomic.Bool

	mu       sync.Mutex
	report   []byte // the newest report message not sent yet
	clock    int64  // its clock
	reported chan struct{}
	getStart time.Time // the GET that began the current renewal round
	pending  []sentReport
}

// sentReport is a report on its way to the instructor's dashboard.
type sentReport struct {
	clock int64 // the tab's clock in the report, Unix ms
	sent  time.Time
}

func (w *workshopRun) newTab(p WorkshopParticipant, i int) *simTab {
	t := &simTab{
		w: w, participant: p,
		identity:  fmt.Sprintf("%s-tab-%d", p.Name, i),
		namespace: p.Namespace,
		lease:     fmt.Sprintf("tab-%d", i),
		writes:    &leaseWrites{},
		leading:   make(chan struct{}),
		started:   make(chan struct{}),
		failed:    make(chan error, 1),
		reported:  make(chan struct{}, 1),
	}
	if w.cfg.Room {
		t.identity, t.namespace, t.lease = p.Name, roomNamespace, roomLease
	}
	return t
}

// awaitLeader waits until the tab leads its lease, its setup failed, ctx ends or deadline
// passes.
func (t *simTab) awaitLeader(ctx context.Context, deadline time.Time) error {
	return t.await(ctx, deadline, t.leading, fmt.Errorf("did not lead its lease %s/%s in time", t.namespace, t.lease))
}

// awaitStarted waits until the tab's candidate has reported, its setup failed, ctx ends or
// deadline passes.
func (t *simTab) awaitStarted(ctx context.Context, deadline time.Time) error {
	return t.await(ctx, deadline, t.started, errors.New("its candidate did not start in time"))
}

// await waits until done closes (nil), the tab's setup fails, ctx ends, or deadline passes
// (late).
func (t *simTab) await(ctx context.Context, deadline time.Time, done <-chan struct{}, late error) error {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case err := <-t.failed:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return late
	}
}

func (t *simTab) setupFailed(err error) {
	select {
	case t.failed <- err:
	default:
	}
}

// run runs the tab until ctx ends.
func (t *simTab) run(ctx context.Context) {
	w := t.w
	conn, err := w.dial(ctx, "/ui/tabs/connect", t.participant.Token)
	if err != nil {
		t.setupFailed(fmt.Errorf("connect to the tab hub: %w", err))
		return
	}
	defer conn.CloseNow()
	worker := candidate.NewWorker(candidate.WorkerOptions{
		Post:      t.post,
		Transport: tabTransport{t: t, next: candidate.HTTPTransport{Client: w.api[t.participant.Name]}},
	})
	defer worker.Close()

	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() { t.readHub(ctx, conn, worker); cancel() })
	wg.Go(func() { t.sendReports(ctx, conn); cancel() })

	start, _ := json.Marshal(map[string]any{"type": "start", "config": candidate.Params{
		BaseURL: w.cfg.URL, Token: t.participant.Token, Namespace: t.namespace, Lease: t.lease, Identity: t.identity,
		LeaseDuration: seconds(w.cfg.LeaseDuration), RenewDeadline: seconds(w.cfg.RenewDeadline), RetryPeriod: seconds(w.cfg.RetryPeriod),
	}})
	worker.Handle(start)
	<-ctx.Done()
}

func seconds(d time.Duration) *float64 {
	s := d.Seconds()
	return &s
}

// readHub takes the hub's messages: its hello, and fault commands, which the candidate obeys
// as the page forwards them.
func (t *simTab) readHub(ctx context.Context, conn *websocket.Conn, worker *candidate.Worker) {
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				t.w.fail("tab hub", fmt.Errorf("tab %s: hub connection: %w", t.identity, err))
			}
			return
		}
		var m struct {
			Type    string          `json:"type"`
			Command json.RawMessage `json:"command"`
		}
		if json.Unmarshal(data, &m) == nil && m.Type == tabproto.TypeCommand {
			worker.Handle([]byte(`{"type":"remote","command":` + string(m.Command) + `}`))
		}
	}
}

// post takes a message of the candidate's worker, as the page's worker.onmessage does.
func (t *simTab) post(msg []byte) {
	var m struct {
		Type     string `json:"type"`
		Error    string `json:"error"`
		Snapshot struct {
			State string `json:"state"`
		} `json:"snapshot"`
		Report json.RawMessage `json:"report"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		t.w.fail("tab", fmt.Errorf("tab %s: worker message: %w", t.identity, err))
		return
	}
	switch m.Type {
	case "error":
		err := fmt.Errorf("tab %s: %s", t.identity, m.Error)
		t.setupFailed(err)
		t.w.fail("tab", err)
		return
	case "snapshot":
	default:
		return
	}
	t.startOnce.Do(func() { close(t.started) })
	if m.Snapshot.State == string(tabproto.StateLeader) {
		t.wasLeader.Store(true)
		t.leadOnce.Do(func() { close(t.leading) })
	} else if t.wasLeader.Load() && t.w.measure.Load() {
		t.lostLead.Store(true)
	}
	var r struct {
		Clock int64 `json:"clock"`
	}
	_ = json.Unmarshal(m.Report, &r)
	t.mu.Lock()
	t.report = append([]byte(`{"type":"report","tab":`), append(m.Report, '}')...)
	t.clock = r.Clock
	t.mu.Unlock()
	select {
	case t.reported <- struct{}{}:
	default:
	}
}

// sendReports sends the newest report to the hub, at most every tabReportEvery, as play.js
// does.
func (t *simTab) sendReports(ctx context.Context, conn *websocket.Conn) {
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.reported:
		}
		if !sleepUntil(ctx, last.Add(tabReportEvery)) {
			return
		}
		t.mu.Lock()
		msg, clock := t.report, t.clock
		t.report = nil
		t.mu.Unlock()
		if msg == nil {
			continue
		}
		last = time.Now()
		t.mu.Lock()
		if len(t.pending) == maxPendingReports {
			t.pending = append(t.pending[:0], t.pending[1:]...)
		}
		t.pending = append(t.pending, sentReport{clock: clock, sent: last})
		t.mu.Unlock()
		wctx, cancel := context.WithTimeout(ctx, wsTimeout)
		err := conn.Write(wctx, websocket.MessageText, msg)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				t.w.fail("tab hub", fmt.Errorf("tab %s: report: %w", t.identity, err))
			}
			return
		}
	}
}

// shown takes the instructor's dashboard showing the tab's report of clock at at: that report
// and the older ones still waiting have arrived.
func (t *simTab) shown(clock int64, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, p := range t.pending {
		if p.clock > clock {
			break
		}
		if t.w.inWindow(p.sent) {
			t.w.tabReports.add(at.Sub(p.sent))
		}
		n++
	}
	t.pending = append(t.pending[:0], t.pending[n:]...)
}

// tabTransport carries a tab's API requests and times its renewals: from the GET that begins
// a round to the answer of its PUT. It records the start of each PUT for the dashboards.
type tabTransport struct {
	t    *simTab
	next candidate.HTTPTransport
}

func (tt tabTransport) RoundTrip(ctx context.Context, req *candidate.Request) (*candidate.Response, error) {
	t, w := tt.t, tt.t.w
	now := time.Now()
	onLease := strings.HasSuffix(req.URL, "/leases/"+t.lease)
	t.mu.Lock()
	began := t.getStart
	switch {
	case onLease && req.Method == http.MethodGet:
		t.getStart = now
	case onLease && req.Method == http.MethodPut:
		t.writes.add(now)
		if began.IsZero() {
			began = now
		}
		t.getStart = time.Time{}
	}
	t.mu.Unlock()
	resp, err := tt.next.RoundTrip(ctx, req)
	if err != nil {
		if ctx.Err() == nil {
			w.fail("network", fmt.Errorf("tab %s: %s %s: %w", t.identity, req.Method, req.URL, err))
		}
		return resp, err
	}
	code := resp.StatusCode
	switch {
	case code < 300:
		if onLease && req.Method == http.MethodPut && w.inWindow(began) {
			w.renewals.Add(1)
			w.renew.add(time.Since(began))
			if w.cfg.Room {
				w.room.add(resourceVersion(resp.Body), now)
			}
		}
	case code == http.StatusNotFound && req.Method == http.MethodGet, code == http.StatusConflict && req.Method == http.MethodPost:
		// The lease does not exist yet, or exists already: the candidate creates it or reads it.
	default:
		w.fail(http.StatusText(code), fmt.Errorf("tab %s: %s %s: %d %.200s", t.identity, req.Method, req.URL, code, resp.Body))
	}
	return resp, nil
}

// dial opens a WebSocket to path on the server with token.
func (w *workshopRun) dial(ctx context.Context, path, token string) (*websocket.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, wsTimeout)
	defer cancel()
	u := "ws" + strings.TrimPrefix(w.cfg.URL, "http") + path
	conn, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{
		HTTPClient: w.ws,
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}},
	})
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(64 << 20)
	return conn, nil
}
