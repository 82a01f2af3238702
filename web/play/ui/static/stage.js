// stage.js: keeps the stage current and animates it. The server draws the picture (who leads,
// the record, each candidate's timers, the requests, the lanes) and says over a WebSocket when
// it changed; the picture is then fetched and swapped in (LL.swap). Between swaps this script
// only moves what time moves: request dots along their links and rings draining, from the
// instants (server clock, Unix ms) the picture carries. The lanes' zoom works wherever they are
// drawn (the stage, a lesson, the lease page).
'use strict';
(function () {
  const page = document.getElementById('stage-page') || { dataset: {} };
  const LL = window.LL;
  const liveURL = page.dataset.liveUrl;
  const watchURL = page.dataset.watchUrl;
  const reduce = window.matchMedia('(prefers-reduced-motion: reduce)');
  const CX = 500, CY = 300;
  const LEG = 350; // ms a request takes along its link, out or back, on a whole network
  const SLOW_LEG = 1200;
  const FADE = 900;

  // --- the picture, fetched again when the server says it changed ---------------------------
  let inflight = false;
  let again = false;
  function refresh() {
    if (LL.moment() || !liveURL) return;
    if (inflight) { again = true; return; }
    inflight = true;
    const lanes = saveLanes();
    LL.swap(liveURL, 'stage-live')
      .then(() => restoreLanes(lanes))
      .catch(() => {})
      .finally(() => { inflight = false; if (again) { again = false; refresh(); } });
  }
  if (watchURL && !LL.moment()) LL.socket('stage', watchURL, refresh);

  // --- requests and rings, every frame -------------------------------------------------------
  function clamp(v) { return v < 0 ? 0 : v > 1 ? 1 : v; }
  function kindOf(outcome) {
    if (!outcome) return '';
    if (outcome === 'timeout' || outcome === 'refused') return 'failed';
    const code = +outcome;
    if (code >= 200 && code < 300) return 'ok';
    if (code === 409) return 'conflict';
    return 'failed';
  }

  // --- a phone held upright: the same picture, stretched tall --------------------------------
  // The server places everyone in a wide frame; on a narrow screen the places are pulled in
  // sideways and out upwards and downwards, so that names stay readable.
  const narrow = window.matchMedia('(max-width: 600px)');
  const WIDE = '0 -50 1000 660', TALL = '180 -170 640 930';
  function toFrame(x, y) {
    return narrow.matches ? [CX + (x - CX) * 0.5, CY + (y - CY) * 1.55] : [x, y];
  }
  function layout(live) {
    const svg = live.querySelector('.stage-picture');
    if (!svg) return;
    svg.setAttribute('viewBox', narrow.matches ? TALL : WIDE);
    for (const g of live.querySelectorAll('.stage-cand, .link-cut-mark')) {
      const [x, y] = toFrame(+g.dataset.x, +g.dataset.y);
      g.setAttribute('transform', 'translate(' + x.toFixed(1) + ' ' + y.toFixed(1) + ')');
    }
    for (const l of live.querySelectorAll('.stage-link')) {
      const [x, y] = toFrame(+l.dataset.x, +l.dataset.y);
      l.setAttribute('x1', x.toFixed(1));
      l.setAttribute('y1', y.toFixed(1));
    }
  }
  narrow.addEventListener('change', () => { cachedLive = null; });

  /** Where a request is at now, and how visible: out along its link, waiting at the server (or
   *  hung at the cut), then back with its answer, then gone. */
  function place(g, now) {
    const [x, y] = toFrame(+g.dataset.x, +g.dataset.y);
    const start = +g.dataset.startMs, end = +g.dataset.endMs;
    const link = g.dataset.link;
    const outcome = g.dataset.outcome;
    const leg = link === 'slow' ? SLOW_LEG : LEG;
    // Out to the cut, or to the server's edge (its box is 300 by 160, centred).
    const dx = Math.abs(CX - x), dy = Math.abs(CY - y);
    const edge = 1 - Math.min(dx ? 164 / dx : 1, dy ? 94 / dy : 1);
    const reach = link === 'cut' ? 0.5 : Math.min(0.95, Math.max(0.3, edge));
    const at = (p) => [x + (CX - x) * p, y + (CY - y) * p];
    if (reduce.matches) { // a tick at the candidate: no travel
      const [tx, ty] = at(0.22);
      const gone = end && now - end > 2500;
      return { x: tx, y: ty, opacity: gone ? 0 : 1 };
    }
    const arrive = start + leg;
    if (!end || now < Math.max(end, arrive)) {
      const p = clamp((now - start) / leg) * reach;
      const [px, py] = at(p);
      return { x: px, y: py, opacity: 1 };
    }
    const back = Math.max(end, arrive);
    if (outcome === 'timeout') { // it dies where it hung
      const [px, py] = at(reach);
      return { x: px, y: py, opacity: 1 - clamp((now - back) / FADE) };
    }
    const q = clamp((now - back) / leg);
    const [px, py] = at(reach * (1 - q));
    return { x: px, y: py, opacity: q < 1 ? 1 : 1 - clamp((now - back - leg) / FADE) };
  }

  // What moves, looked up once per picture rather than every frame.
  let cachedLive = null;
  let reqs = [];
  let rings = [];
  function frame() {
    const now = LL.serverNow();
    const live = document.getElementById('stage-live');
    if (live !== cachedLive) {
      cachedLive = live;
      if (live) layout(live);
      reqs = live ? Array.from(live.querySelectorAll('.stage-req')) : [];
      rings = live ? Array.from(live.querySelectorAll('.ring')) : [];
    }
    if (live) {
      const shown = live.dataset.at ? +live.dataset.nowMs : now;
      for (const g of reqs) {
        const p = place(g, shown);
        g.setAttribute('transform', 'translate(' + p.x.toFixed(1) + ' ' + p.y.toFixed(1) + ')');
        g.style.opacity = p.opacity.toFixed(2);
        const k = kindOf(g.dataset.outcome);
        if (g.dataset.kind !== k) g.dataset.kind = k;
      }
      for (const r of rings) {
        const left = clamp((+r.dataset.dueMs - shown) / +r.dataset.spanMs);
        r.setAttribute('stroke-dasharray', (left * 100).toFixed(1) + ' 100');
        r.classList.toggle('ring-low', left < 0.25);
      }
    }
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);

  // --- the lanes: zoom (buttons, ctrl+wheel, pinch), and scroll kept across swaps ------------
  let zoom = 1;
  function scroller() { return document.querySelector('.stage-lanes .lanes-scroll'); }
  function body() { return document.querySelector('.stage-lanes .lanes-body'); }
  function saveLanes() {
    const s = scroller();
    return s ? { atEnd: s.scrollLeft + s.clientWidth >= s.scrollWidth - 2, left: s.scrollLeft } : null;
  }
  function restoreLanes(saved) {
    applyZoom();
    const s = scroller();
    if (!s || !saved) return;
    s.scrollLeft = saved.atEnd ? s.scrollWidth : saved.left;
  }
  function applyZoom() {
    const b = body();
    if (b) b.style.width = (zoom * 100) + '%';
  }
  function setZoom(z, focus) {
    const s = scroller();
    if (!s) return;
    const before = s.scrollWidth;
    const f = focus === undefined ? (s.scrollLeft + s.clientWidth / 2) / before : focus;
    zoom = Math.min(64, Math.max(1, z));
    applyZoom();
    s.scrollLeft = f * s.scrollWidth - s.clientWidth / 2;
  }
  document.addEventListener('click', (e) => {
    const b = e.target.closest && e.target.closest('.stage-lanes [data-zoom]');
    if (!b) return;
    const lanes = b.closest('.stage-lanes');
    switch (b.dataset.zoom) {
      case 'in': setZoom(zoom * 2); break;
      case 'out': setZoom(zoom / 2); break;
      case 'all': setZoom(1, 1); break;
      case 'split': {
        const from = +lanes.dataset.fromMs, to = +lanes.dataset.toMs;
        const a = +b.dataset.fromMs, z = +b.dataset.toMs;
        const part = Math.max((z - a) / (to - from), 0.0005);
        setZoom(0.4 / part, ((a + z) / 2 - from) / (to - from));
        break;
      }
    }
  });
  document.addEventListener('wheel', (e) => {
    if (!e.ctrlKey || !e.target.closest || !e.target.closest('.stage-lanes')) return;
    e.preventDefault(); // a pinch on a touchpad, or ctrl and the wheel
    setZoom(zoom * (e.deltaY < 0 ? 1.25 : 0.8));
  }, { passive: false });
  let pinch = 0;
  document.addEventListener('touchmove', (e) => {
    if (e.touches.length !== 2 || !e.target.closest || !e.target.closest('.stage-lanes')) { pinch = 0; return; }
    const d = Math.hypot(e.touches[0].clientX - e.touches[1].clientX, e.touches[0].clientY - e.touches[1].clientY);
    if (pinch) setZoom(zoom * d / pinch);
    pinch = d;
  }, { passive: true });
  document.addEventListener('keydown', (e) => {
    if (e.target.closest && e.target.closest('input, textarea, select')) return;
    if (e.key === '+' || e.key === '=') setZoom(zoom * 2);
    if (e.key === '-') setZoom(zoom / 2);
  });
  // Lanes open at the newest moment.
  restoreLanes({ atEnd: true, left: 0 });
  window.addEventListener('resize', () => restoreLanes(saveLanes()));
})();
