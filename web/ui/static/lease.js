// lease.js: keeps the lease page current. Changes to the lease, its events and its
// LeaseCandidates arrive on the API's watch streams; each one (and a slow tick that scrolls the
// timeline) fetches the server-rendered live part again and swaps it in. The fragment is parsed
// with DOMParser (never innerHTML) and is escaped HTML from the server's templates.
'use strict';
(function () {
  const page = document.getElementById('lease-page');
  if (!page) return;
  const LL = window.LL;
  // A page that shows a past moment (?at=) stays on it: nothing is live.
  if (page.dataset.at) {
    const conn = document.getElementById('conn');
    if (conn) conn.textContent = 'past moment';
    return;
  }
  const ns = page.dataset.namespace;
  const name = page.dataset.name;
  const liveURL = page.dataset.liveUrl;
  const enc = encodeURIComponent;

  let inflight = false;
  let again = false;
  let timer = 0;
  let lastRefresh = 0;
  const minGap = 1000;

  function refresh() {
    timer = 0;
    if (inflight) { again = true; return; }
    inflight = true;
    lastRefresh = Date.now();
    fetch(liveURL, { headers: { Accept: 'text/html' }, cache: 'no-store' })
      .then((r) => (r.ok ? r.text() : Promise.reject(new Error('HTTP ' + r.status))))
      .then((html) => {
        const doc = new DOMParser().parseFromString(html, 'text/html');
        const fresh = doc.getElementById('lease-live');
        const cur = document.getElementById('lease-live');
        if (fresh && cur) {
          // Keep the reader's open tooltips and scroll: only replace what changed.
          cur.replaceWith(document.adoptNode(fresh));
          LL.updateRings();
        }
      })
      .catch(() => {})
      .finally(() => {
        inflight = false;
        if (again) { again = false; schedule(); }
      });
  }

  /** Refreshes soon, at most once a second. */
  function schedule() {
    if (timer) return;
    const wait = Math.max(50, minGap - (Date.now() - lastRefresh));
    timer = setTimeout(refresh, wait);
  }

  const rv = page.dataset.rv;
  const reload = () => location.reload();
  LL.watch('lease', '/apis/coordination.k8s.io/v1/namespaces/' + enc(ns) + '/leases?fieldSelector=' + enc('metadata.name=' + name), rv, schedule, reload);
  LL.watch('events', '/api/v1/namespaces/' + enc(ns) + '/events', rv, (type, o) => {
    const io = o.involvedObject || {};
    if (io.kind === 'Lease' && io.name === name) schedule();
  }, reload);
  LL.watch('candidates', '/apis/coordination.k8s.io/v1beta1/namespaces/' + enc(ns) + '/leasecandidates', rv, (type, o) => {
    if ((o.spec || {}).leaseName === name) schedule();
  }, reload);
  // The timeline's right edge is now: let it scroll, and pick up tabs coming and going.
  setInterval(() => { if (!document.hidden) schedule(); }, 3000);
})();
