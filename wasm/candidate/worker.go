package candidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// Worker runs one candidate behind the message protocol spoken between a
// dedicated Web Worker and its page. Messages are JSON objects with a "type".
//
// Page to worker:
//
//	{"type":"start","config":{"lease":"demo","namespace":"default","identity":"tab-1",
//	  "leaseDuration":10,"renewDeadline":7,"retryPeriod":2,"releaseOnCancel":false,
//	  "stopAfterLoss":false,"baseURL":"","token":"",
//	  "coordinated":false,"binaryVersion":"1.36.0","emulationVersion":"1.35.0"}}
//	                                                      only "lease" is required; the versions
//	                                                      only with "coordinated" (then required)
//	{"type":"pause"}  {"type":"resume"}
//	{"type":"partition","mode":"hang"|"fail"}             mode defaults to "hang"
//	{"type":"heal"}
//	{"type":"slow","latencyMs":8000}                      0 turns it off; absent means the
//	                                                      first delay its renewals cannot
//	                                                      outlast (Timings.SlowLatency)
//	{"type":"clockOffset","seconds":-5}                   absolute offset, not a step
//	{"type":"clockRate","rate":1.25}                      the clock runs 25% fast; 1 restores it
//	{"type":"release"}  {"type":"crash"}  {"type":"rejoin"}
//	{"type":"snapshot"}                                   post a snapshot now
//	{"type":"remote","command":{...}}                     a command from the server's tab hub,
//	                                                      obeyed only if tabproto.Command.Validate
//	                                                      accepts it
//
// The commands are tabproto.Command values; out-of-range values are clamped.
//
// Worker to page:
//
//	{"type":"ready"}                                      posted by Ready; send "start" after it
//	{"type":"snapshot","snapshot":{...},"report":{...}}   after every change: the snapshot (see
//	                                                      Snapshot.MarshalJSON; coordinated mode
//	                                                      adds nothing but values: "coordinated",
//	                                                      "binaryVersion", "emulationVersion",
//	                                                      "strategy", "preferredHolder") and the
//	                                                      tabproto.Report the page passes on to
//	                                                      the server's tab hub
//	{"type":"error","error":"...","problems":["..."]}     refused config or message
type Worker struct {
	opts   WorkerOptions
	postMu sync.Mutex // one Post at a time

	mu     sync.Mutex
	cand   *Candidate
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// WorkerOptions are a Worker's dependencies.
type WorkerOptions struct {
	// Post sends one JSON message to the page. It is called from one
	// goroutine at a time.
	Post func(msg []byte)
	// BaseURL is used when the start config names none: in the browser, the
	// worker's origin.
	BaseURL string
	// Clock, Transport and Rand are passed to the candidate (see Options).
	Clock     Clock
	Transport Transport
	Rand      func() float64
}

// NewWorker returns a Worker waiting for its start message.
func NewWorker(opts WorkerOptions) *Worker {
	ctx, cancel := context.WithCancel(context.Background())
	return &Worker{opts: opts, ctx: ctx, cancel: cancel}
}

// Candidate returns the running candidate, or nil before a successful start.
func (w *Worker) Candidate() *Candidate {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cand
}

// Ready tells the page that messages are now handled.
func (w *Worker) Ready() {
	w.post(map[string]any{"type": "ready"})
}

// workerMessage is a message from the page: "start" with its config,
// "remote" with a command from the dashboard, or a command of its own.
type workerMessage struct {
	tabproto.Command
	Config json.RawMessage   `json:"config"`
	Remote *tabproto.Command `json:"command"`
}

// Handle acts on one message from the page. It does not block: the
// candidate runs in goroutines of its own. Problems are posted as "error"
// messages.
func (w *Worker) Handle(msg []byte) {
	var m workerMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		w.postError(fmt.Errorf("bad message: %w", err))
		return
	}
	if m.Type == "start" {
		w.start(m.Config)
		return
	}
	c := w.Candidate()
	if c == nil {
		w.postError(fmt.Errorf("%q before start", m.Type))
		return
	}
	cmd := m.Command
	if m.Type == "remote" {
		// The page forwards what the server's tab hub sent: obey fault commands only.
		if m.Remote == nil {
			w.postError(errors.New(`remote needs "command"`))
			return
		}
		if err := m.Remote.Validate(); err != nil {
			w.postError(fmt.Errorf("refused the dashboard's command: %w", err))
			return
		}
		cmd = *m.Remote
	}
	if err := w.obey(c, cmd); err != nil {
		w.postError(err)
	}
}

// obey carries out a command: a snapshot for the page, or a fault (Candidate.Obey).
func (w *Worker) obey(c *Candidate, cmd tabproto.Command) error {
	if cmd.Type == tabproto.CommandSnapshot {
		w.postSnapshot(c)
		return nil
	}
	return c.Obey(cmd)
}

func (w *Worker) start(raw json.RawMessage) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cand != nil {
		w.postError(errors.New("already started: start a new worker to change the configuration"))
		return
	}
	p, err := unmarshalParams(raw)
	if err == nil {
		if p.BaseURL == "" {
			p.BaseURL = w.opts.BaseURL
		}
		var cfg Config
		cfg, err = p.Config()
		if err == nil {
			w.cand, err = New(cfg, Options{Clock: w.opts.Clock, Transport: w.opts.Transport, Rand: w.opts.Rand})
		}
	}
	if err != nil {
		w.postError(err)
		return
	}
	c := w.cand
	changes, unsubscribe := c.Subscribe()
	w.wg.Add(2)
	go func() {
		defer w.wg.Done()
		_ = c.Run(w.ctx)
	}()
	go func() {
		defer w.wg.Done()
		defer unsubscribe()
		w.postSnapshot(c)
		for {
			select {
			case <-w.ctx.Done():
				return
			case <-changes:
				w.postSnapshot(c)
			}
		}
	}()
}

// Close stops the candidate (as a crash: nothing is released) and waits for
// its goroutines.
func (w *Worker) Close() {
	w.cancel()
	w.wg.Wait()
}

// postSnapshot posts the snapshot and, for the page to pass on to the
// server's tab hub, the report it makes.
func (w *Worker) postSnapshot(c *Candidate) {
	s := c.Snapshot()
	w.post(map[string]any{"type": "snapshot", "snapshot": s, "report": s.Report()})
}

func (w *Worker) postError(err error) {
	m := map[string]any{"type": "error", "error": err.Error()}
	var ce *ConfigError
	if errors.As(err, &ce) {
		m["problems"] = ce.Problems
	}
	w.post(m)
}

func (w *Worker) post(m map[string]any) {
	b, err := json.Marshal(m)
	if err != nil {
		b = []byte(`{"type":"error","error":"cannot encode message"}`) //said:english the protocol's last resort
	}
	w.postMu.Lock()
	defer w.postMu.Unlock()
	w.opts.Post(b)
}
