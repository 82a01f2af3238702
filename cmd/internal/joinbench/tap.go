package joinbench

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// The candidate runs in a dedicated worker, and Chromium throttles a worker's requests only
// once a DevTools session of the worker has its Network domain enabled: without it, the
// worker fetches the wasm at full speed whatever the page's emulated network. chromedp
// attaches every page's workers (Target.setAutoAttach) but leaves their sessions alone. The
// tap on the connection to Chromium makes each new worker wait for the debugger, enables its
// Network domain, and only then lets it run, so that all it loads is throttled as the page is.

// ownIDs are the ids of the tap's own commands, far above chromedp's (Chromium takes 32-bit ids).
const ownIDs = 1 << 30

// tap is the connection to Chromium, with what the comment above says.
type tap struct {
	chromedp.Transport
	next atomic.Int64
}

// dialTap connects to Chromium's DevTools websocket through a tap.
func dialTap(ctx context.Context, wsURL string) (chromedp.Transport, error) {
	conn, err := remote.DialContext(ctx, wsURL)
	if err != nil {
		return nil, err
	}
	return &tap{Transport: conn}, nil
}

// Write makes the targets that a session auto-attaches wait for the debugger.
func (t *tap) Write(ctx context.Context, msg *cdproto.Message) error {
	if msg.Method == target.CommandSetAutoAttach {
		var p map[string]any
		if json.Unmarshal(msg.Params, &p) == nil {
			p["waitForDebuggerOnStart"] = true
			if b, err := json.Marshal(p); err == nil {
				msg.Params = b
			}
		}
	}
	return t.Transport.Write(ctx, msg)
}

// Read passes Chromium's messages on, but for the answers to the tap's own commands; a target
// that waits for the debugger is let run, a worker once its Network domain is on.
func (t *tap) Read(ctx context.Context, msg *cdproto.Message) error {
	for {
		if err := t.Transport.Read(ctx, msg); err != nil {
			return err
		}
		if msg.ID >= ownIDs {
			continue
		}
		if msg.Method == cdproto.EventTargetAttachedToTarget {
			var ev struct {
				SessionID  target.SessionID `json:"sessionId"`
				TargetInfo struct {
					Type string `json:"type"`
				} `json:"targetInfo"`
				Waiting bool `json:"waitingForDebugger"`
			}
			if json.Unmarshal(msg.Params, &ev) == nil && ev.Waiting {
				if ev.TargetInfo.Type == "worker" {
					t.send(ctx, ev.SessionID, "Network.enable")
				}
				t.send(ctx, ev.SessionID, "Runtime.runIfWaitingForDebugger")
			}
		}
		return nil
	}
}

// send sends a command without parameters to a session; Chromium runs a session's commands in
// order, so no answer is awaited (and Read drops it).
func (t *tap) send(ctx context.Context, session target.SessionID, method string) {
	t.Transport.Write(ctx, &cdproto.Message{ID: ownIDs + t.next.Add(1), SessionID: session, Method: cdproto.MethodType(method), Params: []byte(`{}`)})
}
