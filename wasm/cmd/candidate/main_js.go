// Command candidate is the browser's leader-election candidate. It runs in a
// dedicated Web Worker and speaks the message protocol documented on
// candidate.Worker: it posts {"type":"ready"}, waits for a "start" message,
// then posts a snapshot after every change and obeys fault commands.
//
// Build: GOOS=js GOARCH=wasm go build -o candidate.wasm ./wasm/cmd/candidate
package main

import (
	"syscall/js"

	"github.com/leaselab/leaselab/wasm/candidate"
)

func main() {
	self := js.Global() // the worker's global scope
	jsonObj := self.Get("JSON")

	baseURL := ""
	if loc := self.Get("location"); loc.Truthy() {
		baseURL = loc.Get("origin").String()
	}

	w := candidate.NewWorker(candidate.WorkerOptions{
		BaseURL: baseURL,
		Post: func(msg []byte) {
			// Post a structured object, not a string, so the page reads
			// event.data directly.
			self.Call("postMessage", jsonObj.Call("parse", string(msg)))
		},
	})

	onMessage := js.FuncOf(func(_ js.Value, args []js.Value) any {
		data := args[0].Get("data")
		var text string
		if data.Type() == js.TypeString {
			text = data.String()
		} else {
			text = jsonObj.Call("stringify", data).String()
		}
		w.Handle([]byte(text))
		return nil
	})
	self.Call("addEventListener", "message", onMessage)
	w.Ready()

	select {} // the worker lives until the page terminates it
}
