// stage.js: keeps the stage current and animates it. The server draws the picture (who leads,
// the record, each candidate's timers, the requests, the lanes) and says over a WebSocket when
// it changed; the picture is then fetched and patched into the page's in place (patch). Between
// patches this script only moves what time moves: request dots along their links and rings
// draining, from the instants (server clock, Unix ms) the picture carries, writing only what
// changed. The lanes' zoom works wherever they are drawn (the stage, a lesson, the lease page).
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
    LL.swap(liveURL, 'stage-live', patch)
      .then(() => { restoreLanes(lanes); picture++; kick(); })
      .catch(() => {})
      .finally(() => { inflight = false; if (again) { again = false; refresh(); } });
  }
  if (watchURL && !LL.moment()) LL.socket('stage', watchURL, refresh);

  // --- patching: the page's picture made like the server's, element by element ---------------
  // A new picture swapped in whole, four times a second, had Chromium style, lay out and shape
  // the text of every one of its elements again: with 1,000 candidates that cost a frame or
  // more each time. Patched, only the elements that changed are touched. Elements are matched
  // by what names them (a request's id, a candidate's identity, a ring's timer), else by their
  // place among their like.
  function keyOf(el) {
    const a = (n) => el.getAttribute(n);
    return el.localName + '|' + (a('data-testid') || a('class') || '') + '|' + (a('data-id') || a('data-identity') || a('data-timer') || '');
  }
  /** Attributes this script draws, which a patch leaves alone: an element's place in the frame
   *  (from its data-x and data-y), a request's fade and way back, a ring's drain, the lanes' zoom. */
  function drawnHere(el, name) {
    return name === 'style' || name === 'stroke-dasharray' || name === 'data-low' || name === 'data-back' ||
      ((name === 'transform' || name === 'x1' || name === 'y1') && el.hasAttribute('data-x'));
  }
  /** Whether el holds both elements and words: such an element is replaced, not patched. */
  function mixed(el) {
    if (!el.firstElementChild) return false;
    for (const n of el.childNodes) if (n.nodeType === 3 && n.data.trim()) return true;
    return false;
  }
  function patch(cur, fresh) {
    for (const a of fresh.attributes) {
      if (cur.getAttribute(a.name) !== a.value && !drawnHere(cur, a.name)) cur.setAttribute(a.name, a.value);
    }
    for (const a of Array.from(cur.attributes)) {
      if (!fresh.hasAttribute(a.name) && !drawnHere(cur, a.name)) cur.removeAttribute(a.name);
    }
    if (!fresh.firstElementChild) {
      if (cur.firstElementChild || cur.textContent !== fresh.textContent) cur.textContent = fresh.textContent;
      return;
    }
    const old = new Map();
    const count = new Map();
    const nth = (k) => { const n = (count.get(k) || 0) + 1; count.set(k, n); return k + '#' + n; };
    for (const c of cur.children) old.set(nth(keyOf(c)), c);
    count.clear();
    let prev = null;
    for (const f of Array.from(fresh.children)) {
      const k = nth(keyOf(f));
      let c = old.get(k);
      if (c && !mixed(c) && !mixed(f)) {
        old.delete(k);
        patch(c, f);
      } else {
        c = document.importNode(f, true);
      }
      const want = prev ? prev.nextElementSibling : cur.firstElementChild;
      if (c !== want) cur.insertBefore(c, want);
      prev = c;
    }
    for (const c of old.values()) c.remove();
  }

  // --- requests and rings, every frame -------------------------------------------------------
  function clamp(v) { return v < 0 ? 0 : v > 1 ? 1 : v; }
  /** Sets an attribute only when its value changes: an unchanged one still costs a style pass. */
  function put(el, name, v) { if (el.getAttribute(name) !== v) el.setAttribute(name, v); }

  // --- a phone held upright: the same picture, stretched tall --------------------------------
  // The server places everyone in a wide frame; on a narrow screen the places are pulled in
  // sideways and out upwards and downwards, so that names stay readable.
  const narrow = window.matchMedia('(max-width: 600px)');
  // The wide frame reaches y 640: the role written under a candidate at the bottom of the
  // ellipse (the server's 300, the ellipse's 220, the line's 104) stays inside it.
  const WIDE = '0 -45 1000 685', TALL = '180 -170 640 930';
  function toFrame(x, y) {
    return narrow.matches ? [CX + (x - CX) * 0.5, CY + (y - CY) * 1.55] : [x, y];
  }
  function layout(live) {
    const svg = live.querySelector('.stage-picture');
    if (!svg) return;
    put(svg, 'viewBox', narrow.matches ? TALL : WIDE);
    for (const g of live.querySelectorAll('.stage-cand[data-x], .link-cut-mark')) {
      const [x, y] = toFrame(+g.dataset.x, +g.dataset.y);
      put(g, 'transform', 'translate(' + x.toFixed(1) + ' ' + y.toFixed(1) + ')');
    }
    for (const l of live.querySelectorAll('.stage-link')) {
      const [x, y] = toFrame(+l.dataset.x, +l.dataset.y);
      put(l, 'x1', x.toFixed(1));
      put(l, 'y1', y.toFixed(1));
    }
  }
  narrow.addEventListener('change', () => { picture++; kick(); });

  /** Where a request is at now, how visible, and whether it is on its way back: out along its
   *  way (from rim to reach, worked out once a picture), waiting at the server (or hung at the
   *  cut), then back with its answer, then gone. */
  function place(q, now) {
    const { x, y, start, end, link, rim, reach } = q;
    const leg = link === 'slow' ? SLOW_LEG : LEG;
    const at = (f) => { const p = rim + (reach - rim) * f; return [x + (CX - x) * p, y + (CY - y) * p]; };
    if (reduce.matches) { // a tick at the candidate: no travel
      const [tx, ty] = at(0);
      const gone = end && now - end > 2500;
      return { x: tx, y: ty, opacity: gone ? 0 : 1, back: false };
    }
    const arrive = start + leg;
    if (!end || now < Math.max(end, arrive)) {
      const [px, py] = at(clamp((now - start) / leg));
      return { x: px, y: py, opacity: 1, back: false };
    }
    const back = Math.max(end, arrive);
    if (q.outcome === 'timeout') { // it dies where it hung
      const [px, py] = at(1);
      return { x: px, y: py, opacity: 1 - clamp((now - back) / FADE), back: true };
    }
    const home = clamp((now - back) / leg);
    const [px, py] = at(1 - home);
    return { x: px, y: py, opacity: home < 1 ? 1 : 1 - clamp((now - back - leg) / FADE), back: true };
  }

  // What moves, read once per picture rather than every frame: each request's instants and
  // place, each ring's due time and span, with what was last written of each.
  let picture = 0; // counts the pictures patched in, and the changes of frame
  let seenPicture = -1;
  let cachedLive = null;
  let reqs = [];
  let rings = [];
  // A ring redrawn costs Chromium a style pass over it, its paint and the raster of its tiles:
  // the 72 rings of a crowd's two dozen candidates redrawn every frame cost more than a frame
  // on a slow, shared machine (measured: 4 or 8 rings a frame cost little more than one, 16
  // clearly more). So a ring is redrawn only when its end has moved by a unit of the picture
  // (about a pixel), and at most RING_WRITES a frame, in turn from where the last frame
  // stopped. And a frame that redraws anything costs a style, layout and paint pass over the
  // picture, whatever moved: the rings, which drain slowly, are looked at ten times a second,
  // not sixty, and a frame with no request travelling writes nothing (measured in headless
  // Chromium without a GPU, the stage of three candidates: 38-50% of a core with the rings
  // looked at every frame, 33-36% ten times a second; most of the rest is the requests' travel).
  const RING_WRITES = 8;
  const RING_PERIOD = 100; // ms
  let ringAt = 0;
  let ringPass = -Infinity; // when the last pass over the rings began (performance.now)
  let ringsLeft = 0; // rings the pass has still to look at
  function collect(live) {
    layout(live);
    // What was last written of each is kept on the element, which a patch keeps.
    reqs = Array.from(live.querySelectorAll('.stage-req'), (el) => {
      const [x, y] = toFrame(+el.dataset.x, +el.dataset.y);
      const link = el.dataset.link;
      // Its way, as fractions of the line to the server's centre: out to the cut, or to the
      // server's edge (its box is 300 by 200, centred), from the candidate's outer ring, never
      // over the shape inside that says who leads (75: the outer ring, 60, the dot, 10, and a
      // little).
      const dx = Math.abs(CX - x), dy = Math.abs(CY - y);
      const edge = 1 - Math.min(dx ? 164 / dx : 1, dy ? 114 / dy : 1);
      const reach = link === 'cut' ? 0.5 : Math.min(0.95, Math.max(0.3, edge));
      const dist = Math.hypot(dx, dy);
      const rim = dist ? Math.min(0.6 * reach, 75 / dist) : 0;
      el.llDrawn = el.llDrawn || { t: null, o: null, back: null };
      return { el, x, y, rim, reach, start: +el.dataset.startMs, end: +el.dataset.endMs, link, outcome: el.dataset.outcome, drawn: el.llDrawn };
    });
    rings = Array.from(live.querySelectorAll('.ring'), (el) => {
      el.llDrawn = el.llDrawn || { dash: null, low: null };
      // Its length in the picture's units: it is redrawn when its end moves by one of them.
      const steps = Math.max(1, Math.round(2 * Math.PI * (+el.getAttribute('r') || 50)));
      return { el, due: +el.dataset.dueMs, span: +el.dataset.spanMs, steps, drawn: el.llDrawn };
    });
  }
  function frame() {
    const live = document.getElementById('stage-live');
    if (live !== cachedLive || picture !== seenPicture) {
      cachedLive = live;
      seenPicture = picture;
      if (live) collect(live);
      else reqs = rings = [];
      ringsLeft = 0; // a new picture's rings are drawn at once
      ringPass = -Infinity;
    }
    let moving = false;
    if (live) {
      const frozen = !!live.dataset.at; // a past moment: nothing moves
      const shown = frozen ? +live.dataset.nowMs : LL.serverNow();
      for (const q of reqs) {
        const p = place(q, shown);
        const o = p.opacity.toFixed(2);
        const d = q.drawn;
        if (o === '0.00' && d.o === o) continue; // gone, and drawn gone
        // Still on its way out, or answered (it comes back, or fades): it moves by the frame,
        // from the instant it should, even where it waits at the server until then.
        if (!frozen && !reduce.matches && (q.end || shown < q.start + SLOW_LEG)) moving = true;
        const t = 'translate(' + p.x.toFixed(1) + ' ' + p.y.toFixed(1) + ')';
        if (t !== d.t) { q.el.setAttribute('transform', t); d.t = t; }
        if (o !== d.o) { q.el.style.opacity = o; d.o = o; }
        // An answer coming back shows its outcome only: on a short link the next request's
        // verb is already on its way out beside it.
        if (p.back !== d.back) { q.el.toggleAttribute('data-back', p.back); d.back = p.back; }
      }
      // A pass over the rings every RING_PERIOD, at most RING_WRITES redrawn a frame, in turn
      // from where the last frame stopped.
      const wall = performance.now();
      if (ringsLeft === 0 && wall - ringPass >= RING_PERIOD) { ringPass = wall; ringsLeft = rings.length; }
      let budget = RING_WRITES;
      for (; ringsLeft > 0 && budget > 0; ringsLeft--) {
        ringAt %= rings.length;
        const r = rings[ringAt++];
        const d = r.drawn;
        const left = clamp((r.due - shown) / r.span);
        const dash = (Math.round(left * r.steps) * 100 / r.steps).toFixed(2) + ' 100';
        if (dash !== d.dash) { r.el.setAttribute('stroke-dasharray', dash); d.dash = dash; budget--; }
        const low = left < 0.25;
        if (low !== d.low) { r.el.toggleAttribute('data-low', low); d.low = low; }
      }
    }
    next(moving || ringsLeft > 0);
  }
  // Frames are asked for only while a request travels or fades, or a pass over the rings is
  // unfinished; otherwise the picture is looked at every RING_PERIOD, the rings' pace. Asked
  // for every frame, an idle stage (or a lesson not yet started) kept Chromium drawing sixty
  // times a second for nothing: measured in headless Chromium without a GPU, a tenth of a core
  // for the page. A new picture asks for a frame at once (kick).
  let waiting = 0;
  function next(moving) {
    if (moving) { requestAnimationFrame(frame); return; }
    waiting = setTimeout(() => { waiting = 0; requestAnimationFrame(frame); }, RING_PERIOD);
  }
  /** Draws at the next frame a picture just patched in, instead of at the next look. */
  function kick() {
    if (!waiting) return; // a frame is already asked for
    clearTimeout(waiting);
    waiting = 0;
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);

  // --- the lanes: zoom (buttons, ctrl+wheel, pinch), and scroll kept across patches ----------
  let zoom = 1;
  function scroller() { return document.querySelector('.stage-lanes .lanes-scroll'); }
  function body() { return document.querySelector('.stage-lanes .lanes-body'); }
  function saveLanes() {
    const s = scroller();
    if (!s || (zoom === 1 && !s.scrollLeft)) return { atEnd: true, left: 0 }; // nothing scrolls: no layout forced
    return { atEnd: s.scrollLeft + s.clientWidth >= s.scrollWidth - 2, left: s.scrollLeft };
  }
  function restoreLanes(saved) {
    applyZoom();
    const s = scroller();
    if (!s || !saved || (zoom === 1 && !saved.left)) return; // nothing scrolls: no layout forced
    s.scrollLeft = saved.atEnd ? s.scrollWidth : saved.left;
  }
  function applyZoom() {
    const b = body();
    const w = (zoom * 100) + '%';
    if (b && b.style.width !== w) b.style.width = w;
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
