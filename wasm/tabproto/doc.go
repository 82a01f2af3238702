// Package tabproto is the protocol between a candidate tab and the server's tab hub: the
// report a tab sends about itself, the commands the hub forwards to it from the dashboard, and
// the states a tab can be in. Both ends use it: the browser candidate (wasm/candidate) builds
// its report with it, and the hub (web/play/ui) decodes, validates and forwards with it. It imports
// the standard library only, so that the browser build pays nothing for it.
//
// A tab's stream is a WebSocket at /ui/tabs/connect:
//
//	hub to tab   {"id":"<tab id>","type":"hello"}             once, first
//	             {"type":"command","command":{...}}           a fault command (see Command)
//	tab to hub   {"type":"report","tab":{...}}                after changes (see Report)
//
// The JSON is a contract, byte for byte: a tab opened before an upgrade of the server keeps
// talking to the new one, and a new tab to an old server. Add fields; never rename, remove or
// reorder them.
package tabproto
