// scenario.js: keeps a scenario page current and drives it from the keyboard. The server says
// over a WebSocket when the run changed; the live part (narration, candidates, record) is then
// fetched as the server renders it and swapped in (LL.swap). The control forms work without
// this script (a POST and a redirect); with it they post in the background. Countdowns run
// down between swaps at the rate of each candidate's clock (the run's speed times its drift).
'use strict';
(function () {
  const page = document.getElementById('scenario');
  if (!page) return;
  const LL = window.LL;
  const liveURL = page.dataset.liveUrl;
  let swappedAt = Date.now();
  let inflight = false;
  let again = false;

  function refresh() {
    if (inflight) { again = true; return; }
    inflight = true;
    LL.swap(liveURL, 'scenario-live')
      .then(() => { swappedAt = Date.now(); showControls(); followStep(); })
      .catch(() => {})
      .finally(() => { inflight = false; if (again) { again = false; refresh(); } });
  }

  function live() { return document.getElementById('scenario-live'); }

  /** Brings the step shown into view when it changes (Next, Back, auto-play): the narration
   *  grows below the cards, and a reader must not have to hunt for the step being told. A swap
   *  that lands while the page glides stops the glide, so the same step is followed again after
   *  each swap, until the reader moves the page themselves. */
  let shownStep = (document.querySelector('.step-current') || {}).dataset?.n;
  let readerMoved = false;
  for (const ev of ['wheel', 'touchstart', 'mousedown']) {
    window.addEventListener(ev, () => { readerMoved = true; }, { passive: true });
  }
  window.addEventListener('keydown', (e) => {
    if (['ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End'].includes(e.key)) readerMoved = true;
  });
  function followStep() {
    // An open question is what the room looks at, below the narration.
    const q = document.querySelector('[data-testid="prediction"][data-open="true"]');
    const cur = q || document.querySelector('.step-current');
    const key = cur && (q ? 'q' : '') + (q ? q.dataset.step : cur.dataset.n);
    if (!cur || (key === shownStep && readerMoved)) return;
    if (key !== shownStep) readerMoved = false;
    shownStep = key;
    const r = cur.getBoundingClientRect();
    const controls = document.querySelector('.scenario-controls');
    const top = controls ? controls.getBoundingClientRect().bottom : 0; // the sticky controls cover what is above
    if (r.top >= top && r.bottom <= window.innerHeight + 1) return;
    const reduce = window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    cur.scrollIntoView({ block: 'nearest', behavior: reduce ? 'auto' : 'smooth' });
  }

  /** Enables Next, Back and auto-play as the live part says. */
  function showControls() {
    const l = live();
    if (!l) return;
    const set = (id, on) => {
      const b = page.querySelector('[data-testid="' + id + '"]');
      if (b) b.disabled = !on;
    };
    set('next', l.dataset.canNext === 'true');
    set('back', l.dataset.canBack === 'true');
    set('auto', l.dataset.running === 'true');
    set('stop', l.dataset.running === 'true');
    const auto = page.querySelector('[data-testid="auto"]');
    if (auto) {
      auto.setAttribute('aria-pressed', l.dataset.auto);
      const on = auto.form.querySelector('input[name="on"]');
      if (on) on.value = l.dataset.auto === 'true' ? '0' : '1';
    }
  }

  function post(form, submitter) {
    const action = form.dataset.action;
    // A choice is the button pressed: FormData names it only when told which one it was.
    const body = new URLSearchParams(new FormData(form, submitter && submitter.name ? submitter : undefined));
    fetch(form.action, { method: 'POST', body, headers: { 'X-Requested-With': 'scenario.js' } })
      .then((r) => {
        if (!r.ok) return r.text().then((html) => { throw new Error(errorOf(html, r.status)); });
        if (action === 'start') {
          // A new run: the page starts over from the server, at the link that gives it again.
          const u = new URL(page.dataset.shareUrl, location.href);
          const cur = new URL(location.href);
          for (const k of ['lang', 'present']) if (cur.searchParams.has(k)) u.searchParams.set(k, cur.searchParams.get(k));
          const speed = form.querySelector('select[name="speed"]');
          if (speed) u.searchParams.set('speed', speed.value);
          location.assign(u.href);
          return;
        }
        refresh();
      })
      .catch((e) => showError(e.message));
  }

  function errorOf(html, status) {
    const doc = new DOMParser().parseFromString(html, 'text/html');
    const m = doc.querySelector('[data-testid=error-message]');
    return m ? m.textContent : 'HTTP ' + status;
  }

  function showError(msg) {
    let p = page.querySelector('[data-testid="scenario-error"]');
    if (!p) {
      p = document.createElement('p');
      p.className = 'form-error';
      p.setAttribute('role', 'alert');
      p.dataset.testid = 'scenario-error';
      page.querySelector('.scenario-head').after(p);
    }
    p.textContent = msg;
  }

  // While a run plays, a new speed applies at once to all of its clocks (and to the link).
  const speed = page.querySelector('select[name="speed"]');
  if (speed) speed.addEventListener('change', () => {
    const l = live();
    if (!l || l.dataset.running !== 'true') return;
    const body = new URLSearchParams({ seed: page.dataset.seed, speed: speed.value });
    fetch(page.dataset.actions + '/speed', { method: 'POST', body, headers: { 'X-Requested-With': 'scenario.js' } })
      .then((r) => {
        if (!r.ok) return r.text().then((html) => { throw new Error(errorOf(html, r.status)); });
        const u = new URL(location.href);
        u.searchParams.set('speed', speed.value);
        history.replaceState(null, '', u.href);
        refresh();
      })
      .catch((e) => showError(e.message));
  });

  // The forms of the live part (a question's choices, its Reveal) come and go with each swap:
  // one listener serves them all.
  page.addEventListener('submit', (e) => {
    const form = e.target.closest('form[data-action]');
    if (!form) return;
    e.preventDefault();
    post(form, e.submitter);
  });

  function click(id) {
    const b = page.querySelector('[data-testid="' + id + '"]');
    if (b && !b.disabled) b.form.requestSubmit(b);
  }
  /** The clicker's one button: Start before the run, Reveal while a question is open, else Next. */
  function forward() {
    const l = live();
    if (!l || l.dataset.running !== 'true') click('start');
    else click(l.dataset.asking === 'true' ? 'reveal' : 'next');
  }

  function setPresent(on) {
    document.body.classList.toggle('present', on);
    const u = new URL(location.href);
    if (on) u.searchParams.set('present', '1'); else u.searchParams.delete('present');
    history.replaceState(null, '', u.href);
  }

  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA')) return;
    // Space on a focused button or link is that element's own click: taking it here too would
    // press twice (Start twice is a restart).
    if (e.key === ' ' && t instanceof Element && t.closest('button, a, summary')) return;
    switch (e.key) {
      // Before the lesson runs, the presenter's clicker (space or →) starts it.
      case ' ': case 'ArrowRight': forward(); break;
      case 'ArrowLeft': click('back'); break;
      case 'a': case 'A': click('auto'); break;
      case 'f': case 'F': setPresent(!document.body.classList.contains('present')); break;
      case 'b': case 'B': { const b = document.getElementById('blank'); b.hidden = !b.hidden; break; }
      default: return;
    }
    e.preventDefault();
  });

  /** Sets a property only when its value changes: a text set again, even to the same words,
   *  costs the page a layout. */
  function put(obj, name, v) { if (obj[name] !== v) obj[name] = v; }

  /** Runs each countdown down at its candidate's clock rate since the last swap, ten times a
   *  second, in a frame asked for 100 ms after the last: frames asked for one after another
   *  kept Chromium drawing sixty times a second (stage.js says what that cost); a hidden page
   *  gets none. */
  function tick() {
    const l = live();
    if (l) {
      const gone = Date.now() - swappedAt;
      for (const c of l.querySelectorAll('[data-countdown]')) {
        const left = Math.max(0, Number(c.dataset.leftMs) - gone * Number(c.dataset.rate || 1));
        const total = Number(c.dataset.totalMs) || 1;
        const v = c.querySelector('[data-field="left"]');
        // A renew deadline between rounds lies beyond the setting: it shows full until the round.
        if (v) put(v, 'textContent', (Math.min(left, total) / 1000).toFixed(1) + ' s');
        // Run out: say what the candidate does next rather than a bare 0.0 s.
        const label = c.querySelector('.count-label');
        if (label && label.dataset.elapsed) put(label, 'textContent', left <= 0 ? label.dataset.elapsed : label.dataset.label);
        const bar = c.querySelector('[data-field="bar"]');
        if (bar) put(bar.style, 'width', Math.min(100, 100 * left / total).toFixed(1) + '%');
      }
    }
    setTimeout(() => requestAnimationFrame(tick), 100);
  }

  LL.socket('scenario', page.dataset.watchUrl, refresh);
  showControls();
  requestAnimationFrame(tick);
})();
