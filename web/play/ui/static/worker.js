// worker.js: the dedicated Web Worker that runs the wasm candidate, so that a hidden tab keeps
// renewing (timers on a hidden page are throttled; a worker's are not). The page sends
// {"type":"boot"} with the URLs of wasm_exec.js and candidate.wasm, then {"type":"wasm"} with
// the candidate's body, which it fetched itself (play.js): a stream, or the bytes, or an error
// (then the worker fetches the URL). The Go program then speaks the candidate's own message
// protocol with the page (see wasm/candidate/worker.go) on this worker's message channel. A
// heartbeat reports when the worker's loop falls behind.
'use strict';
let booted = false;
let handed;
const fromPage = new Promise((resolve) => { handed = resolve; });

self.addEventListener('message', (e) => {
  const m = e.data;
  if (m && m.type === 'wasm') handed(m);
  if (!m || m.type !== 'boot' || booted) return;
  booted = true;
  boot(m).catch((err) => {
    const detail = err && err.message ? err.message : String(err);
    self.postMessage({ type: 'fatal', error: 'could not start the candidate: ' + detail, key: 'js.couldNotStart', detail });
  });
});

async function boot(m) {
  // The candidate comes from the page while wasm_exec.js loads.
  const wasm = fromPage.then((h) => (h.error ? fetch(m.wasm)
    : h.bytes || new Response(h.body, { headers: { 'Content-Type': 'application/wasm' } })));
  wasm.catch(() => {}); // a failure is reported where it is awaited
  importScripts(m.wasmExec);
  const go = new Go();
  const src = await wasm;
  const { instance } = await (src instanceof Response
    ? WebAssembly.instantiateStreaming(src, go.importObject)
    : WebAssembly.instantiate(src, go.importObject));
  heartbeat();
  await go.run(instance);
  self.postMessage({ type: 'fatal', error: 'the candidate program exited', key: 'js.exited' });
}

// heartbeat ticks every 250 ms and tells the page when a tick came more than a second late:
// then the candidate's own timers were late too, and it may have missed a renewal.
function heartbeat() {
  const period = 250;
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const late = now - last - period;
    last = now;
    if (late > 1000) self.postMessage({ type: 'lag', lateMs: Math.round(late) });
  }, period);
}
