package candidate

import (
	"context"
	"fmt"
	"syscall/js"
)

// FetchTransport carries requests with the browser's fetch (js builds only).
// Cancelling the context aborts the fetch.
type FetchTransport struct{}

var _ Transport = FetchTransport{}

// RoundTrip calls fetch and waits for the whole response body (at most
// maxResponseBytes are kept).
func (FetchTransport) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	global := js.Global()
	abort := global.Get("AbortController").New()

	headers := global.Get("Headers").New()
	for k, v := range req.Header {
		headers.Call("set", k, v)
	}
	init := map[string]any{
		"method":  req.Method,
		"headers": headers,
		"signal":  abort.Get("signal"),
		"cache":   "no-store",
	}
	if req.Body != nil {
		body := global.Get("Uint8Array").New(len(req.Body))
		js.CopyBytesToJS(body, req.Body)
		init["body"] = body
	}

	type result struct {
		resp *Response
		err  error
	}
	done := make(chan result, 1)
	var status int
	var onResponse, onBody, onError js.Func
	onResponse = js.FuncOf(func(_ js.Value, args []js.Value) any {
		r := args[0]
		status = r.Get("status").Int()
		r.Call("arrayBuffer").Call("then", onBody).Call("catch", onError)
		return nil
	})
	onBody = js.FuncOf(func(_ js.Value, args []js.Value) any {
		buf := global.Get("Uint8Array").New(args[0])
		n := min(buf.Get("length").Int(), maxResponseBytes)
		data := make([]byte, n)
		js.CopyBytesToGo(data, buf.Call("subarray", 0, n))
		done <- result{resp: &Response{StatusCode: status, Body: data}}
		return nil
	})
	onError = js.FuncOf(func(_ js.Value, args []js.Value) any {
		// fetch rejects with a TypeError when no answer came (the browser's message for
		// it differs by browser); anything else keeps its own message.
		err := ErrUnreachable
		if len(args) > 0 && args[0].Truthy() && args[0].Get("name").String() != "TypeError" {
			if m := args[0].Get("message"); m.Type() == js.TypeString {
				err = fmt.Errorf("%w: %s", ErrUnreachable, m.String())
			}
		}
		done <- result{err: err}
		return nil
	})
	defer onResponse.Release()
	defer onBody.Release()
	defer onError.Release()

	global.Call("fetch", req.URL, init).Call("then", onResponse).Call("catch", onError)
	select {
	case r := <-done:
		return r.resp, r.err
	case <-ctx.Done():
		abort.Call("abort")
		<-done // the aborted promise rejects; wait so the callbacks can be released
		return nil, ctx.Err()
	}
}

func defaultTransport() Transport { return FetchTransport{} }
