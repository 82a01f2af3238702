// lease.js: keeps the lease page current. Changes to the lease, its events and its
// LeaseCandidates arrive on the API's watch streams; each one (and a slow tick that scrolls the
// timeline) fetches the server-rendered live part again and swaps it in (LL.swap). While the
// page shows a past moment (the time control, scrub.js, or a ?at= link) nothing here runs; back
// to live, it follows the streams again.
'use strict';
(function () {
  const page = document.getElementById('lease-page');
  if (!page) return;
  const LL = window.LL;
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
    if (LL.moment()) return;
    if (inflight) { again = true; return; }
    inflight = true;
    lastRefresh = Date.now();
    const end = timelineAtEnd();
    LL.swap(liveURL, 'lease-live')
      .then(() => pinTimeline(end))
      .catch(() => {})
      .finally(() => {
        inflight = false;
        if (again) { again = false; schedule(); }
      });
  }

  /** Whether the timeline shows its right edge (now): true too when it fits the screen. */
  function timelineAtEnd() {
    const w = document.querySelector('.timeline-wrap');
    return !w || w.scrollLeft + w.clientWidth >= w.scrollWidth - 2;
  }

  /** On a screen narrower than the timeline, its right edge (now, the takeover, the split
   *  brain) is what a reader came for: scroll there, unless they scrolled away (atEnd false). */
  function pinTimeline(atEnd) {
    const w = document.querySelector('.timeline-wrap');
    if (w && atEnd && w.scrollWidth > w.clientWidth) w.scrollLeft = w.scrollWidth;
  }

  /** Marks a scrolled timeline (app.css shades the names' edge and hides the cut time labels).
   *  The timeline is drawn anew with each refresh: its scrolls are caught on the document. */
  document.addEventListener('scroll', (e) => {
    const w = e.target;
    if (!(w instanceof Element) || !w.classList.contains('timeline-wrap')) return;
    w.classList.toggle('scrolled', w.scrollLeft > 0);
    hideCoveredTimes(w);
  }, true);

  /** Hides the time labels that reach under the lane names, which would show cut ('6:00'). */
  function hideCoveredTimes(w) {
    const names = w.querySelector('.timeline-names');
    if (!names) return;
    const edge = names.getBoundingClientRect().right;
    for (const t of w.querySelectorAll('.timeline .tick')) {
      t.style.visibility = w.scrollLeft > 0 && t.getBoundingClientRect().left < edge ? 'hidden' : '';
    }
  }

  /** Refreshes soon, at most once a second. */
  function schedule() {
    if (timer) return;
    const wait = Math.max(50, minGap - (Date.now() - lastRefresh));
    timer = setTimeout(refresh, wait);
  }

  let started = false;
  /** Follows the lease, its events and its candidates, from the revision the page was rendered at. */
  function start() {
    if (started) return;
    started = true;
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
  }

  document.addEventListener('ll:moment', (e) => {
    if (e.detail.at) return;
    start();
    refresh();
  });
  pinTimeline(true);
  window.addEventListener('resize', () => pinTimeline(true)); // a phone turned, a window narrowed
  if (!LL.moment()) start();
})();
