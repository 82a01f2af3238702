// live.js: what every leaselab page shares. Watch streams over WebSocket (the API server's own
// watch URLs), countdown rings, the server/browser clock offset, small DOM helpers and the
// fault commands. Plain script, no build step. User data only ever goes in via textContent
// and setAttribute.
'use strict';
(function () {
  // The server's clock when it rendered the page, against the browser's clock when the first
  // byte of the page arrived: the offset between the two clocks, within the network latency.
  const serverRendered = Number(document.body.dataset.serverNow) || 0;
  let offset = 0;
  if (serverRendered) {
    let arrived = Date.now();
    const nav = performance.getEntriesByType && performance.getEntriesByType('navigation')[0];
    if (nav && nav.responseStart > 0) arrived = performance.timeOrigin + nav.responseStart;
    offset = serverRendered - arrived;
  }
  // A replay's clock stands at the recording's last change: nothing runs out later.
  const frozen = document.body.hasAttribute('data-replay');
  /** The server's clock now, in Unix ms. */
  function serverNow() { return frozen ? serverRendered : Date.now() + offset; }

  const reducedMotion = window.matchMedia('(prefers-reduced-motion: reduce)');

  // --- the page's language: the messages the server embedded for its scripts ---------------
  const messages = (() => {
    const el = document.getElementById('i18n');
    try { return el ? JSON.parse(el.textContent) || {} : {}; } catch (e) { return {}; }
  })();

  /**
   * The message key in the page's language, formatted with args as Go's fmt does for %s, %d,
   * %[n]s and %%; the key itself when the page has no such message.
   */
  function t(key, ...args) {
    const f = messages[key];
    if (f === undefined) return key;
    let next = 0;
    return f.replace(/%(%|(?:\[(\d+)\])?[sdv])/g, (m, verb, n) => {
      if (m === '%%') return '%';
      const i = n ? Number(n) - 1 : next;
      next = i + 1;
      return i < args.length ? String(args[i]) : m;
    });
  }

  /** Whether the page has the message key. */
  function has(key) { return messages[key] !== undefined; }

  /**
   * A candidate's sentence ({key, args}, the candidate's message: wasm/tabproto.Msg) in the
   * page's language; fallback (its English text) when there is none or the page lacks it.
   */
  function msg(m, fallback) {
    if (!m || typeof m !== 'object') return fallback || '';
    if (!m.key) return '';
    if (!has(m.key)) return fallback || m.key;
    return t(m.key, ...(m.args || []).map((a) => (a && typeof a === 'object' ? msg(a, '') : a)));
  }

  /** A list in the page's language: "a, b" or "a、b". */
  function list(items) { return items.join(document.documentElement.lang === 'zh-CN' ? '、' : ', '); }

  /** Formats milliseconds as seconds: "4.1 s". */
  function secs(ms) {
    const s = ms / 1000;
    if (Math.abs(s) >= 100) return Math.round(s) + ' s';
    return s.toFixed(1) + ' s';
  }

  /** Formats a delay exactly, one decimal at least, as the server labels the choices: "0.25 s", "4.0 s". */
  function delaySecs(ms) {
    const s = String(ms / 1000);
    return (s.includes('.') ? s : s + '.0') + ' s';
  }

  /** Formats a Unix ms instant as wall-clock time: "14:02:11". */
  function clock(ms) {
    if (!ms) return '';
    const d = new Date(ms);
    const p = (n) => String(n).padStart(2, '0');
    return p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds());
  }

  /** How long ago the server-clock instant ms was: "3 s ago", "2 min ago". */
  function ago(ms) {
    if (!ms) return '';
    const s = Math.floor((serverNow() - ms) / 1000);
    if (s < 0) return t('age.future');
    if (s < 60) return t('js.agoS', s);
    if (s < 3600) return t('js.agoMin', Math.floor(s / 60));
    if (s < 48 * 3600) return t('js.agoH', Math.floor(s / 3600));
    return t('js.agoDays', Math.floor(s / 86400));
  }

  /** A banner's "24 s ago" (data-ago: the moment, RFC 3339) keeps time with the time bar beside it. */
  function updateAges() {
    for (const el of document.querySelectorAll('[data-ago]')) {
      const text = ago(Date.parse(el.dataset.ago));
      if (text && el.textContent !== text) el.textContent = text;
    }
  }

  /** The element of root marked data-field=name. */
  function field(root, name) { return root.querySelector('[data-field="' + name + '"]'); }

  /** Sets the text of root's data-field=name, if there is one. */
  function setText(root, name, text) {
    const el = field(root, name);
    if (el && el.textContent !== text) el.textContent = text;
  }

  // --- connection indicator: "live" when every stream is up -------------------------------
  // A stream down for longer than a reconnect's usual blink shows the banner and greys the
  // live content (body.offline), so that nobody reads stale numbers as current. A page that
  // shows a past moment (body[data-at]) has its streams paused and says so instead.
  const streams = new Map();
  const conn = document.getElementById('conn');
  const banner = document.getElementById('offline');
  const connListeners = [];
  let wasUp = false;
  let offlineTimer = 0;
  function connected() {
    for (const v of streams.values()) if (!v) return false;
    return true;
  }
  function setStream(name, up) {
    streams.set(name, up);
    showConnection();
    const all = connected();
    if (all !== wasUp) {
      wasUp = all;
      for (const f of connListeners) f(all);
    }
  }
  function showConnection() {
    const all = connected();
    if (conn) {
      conn.textContent = moment() ? t('js.pastMoment') : all ? (frozen ? t('js.replay') : t('conn.live')) : t('js.reconnecting');
      conn.classList.toggle('down', !all && !moment());
      conn.classList.toggle('past', !!moment());
    }
    if (all || moment()) {
      clearTimeout(offlineTimer);
      offlineTimer = 0;
      setOffline(false);
    } else if (!offlineTimer) {
      offlineTimer = setTimeout(() => { offlineTimer = 0; if (!connected() && !moment()) setOffline(true); }, 1500);
    }
  }
  function setOffline(on) {
    document.body.classList.toggle('offline', on);
    if (banner) banner.hidden = !on;
  }
  /** Calls f(up) whenever the page as a whole connects (every stream up) or loses a stream. */
  function onConnection(f) { connListeners.push(f); }

  // --- the moment shown: live (''), or a past moment (RFC 3339) -----------------------------
  /** The streams, each with pause() and resume(): a page showing a past moment follows none. */
  const pausable = [];
  /** The past moment the page shows, '' when it is live. */
  function moment() { return document.body.dataset.at || ''; }
  /**
   * Shows the moment at ('' for live): pauses every stream while the page shows the past and
   * resumes them when it is live again, and tells the page's scripts ("ll:moment").
   */
  function setMoment(at) {
    const was = moment();
    document.body.dataset.at = at;
    if (!was !== !at) for (const s of pausable) (at ? s.pause : s.resume)();
    showConnection();
    document.dispatchEvent(new CustomEvent('ll:moment', { detail: { at } }));
  }

  function wsURL(path) {
    const u = new URL(path, location.href);
    u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return u;
  }

  /**
   * Watches an API collection over a WebSocket, one watch event per message, from the
   * resourceVersion rv; on a dropped connection it resumes from the last resourceVersion seen.
   * onEvent(type, object) gets ADDED, MODIFIED and DELETED; onExpired() is called when the
   * server no longer has the history to resume (410), and the watch stops.
   */
  function watch(name, path, rv, onEvent, onExpired) {
    let last = rv || '';
    let delay = 500;
    let stopped = false;
    let ws = null;
    function open() {
      if (ws || stopped || moment()) return;
      // In front of a cluster the page was rendered from the mirror: its watches read it too.
      const u = wsURL((document.body.dataset.apiBase || '') + path);
      u.searchParams.set('watch', 'true');
      u.searchParams.set('allowWatchBookmarks', 'true');
      if (last) u.searchParams.set('resourceVersion', last);
      ws = new WebSocket(u.href);
      ws.onopen = () => { delay = 500; setStream(name, true); };
      ws.onmessage = (m) => {
        let ev;
        try { ev = JSON.parse(m.data); } catch (e) { return; }
        const o = ev.object || {};
        if (ev.type === 'ERROR') {
          if (o.code === 410) { stopped = true; ws.close(); if (onExpired) onExpired(); }
          return;
        }
        if (o.metadata && o.metadata.resourceVersion) last = o.metadata.resourceVersion;
        if (ev.type === 'BOOKMARK') return;
        onEvent(ev.type, o);
      };
      ws.onclose = () => {
        ws = null;
        setStream(name, false);
        if (stopped || moment()) return;
        setTimeout(open, delay);
        delay = Math.min(delay * 2, 10000);
      };
    }
    pausable.push({ pause() { if (ws) ws.close(); }, resume: open });
    setStream(name, false);
    open();
  }

  /**
   * A JSON WebSocket to the UI's own endpoints that reconnects. path is a string, or a
   * function asked for it at each (re)connect. onMessage(msg) gets every message; onOpen()
   * runs after each (re)connect. Returns send(obj), which drops messages while disconnected;
   * send.reopen() connects again at once (to a path that changed); send.close() closes it for
   * good (a page that is left).
   */
  function socket(name, path, onMessage, onOpen) {
    let ws = null;
    let delay = 500;
    let closed = false;
    const pathNow = typeof path === 'function' ? path : () => path;
    function open() {
      if (ws || closed || moment()) return;
      const u = wsURL(pathNow());
      u.searchParams.set('page-lang', document.documentElement.lang); // its words in the page's language
      ws = new WebSocket(u.href);
      ws.onopen = () => { delay = 500; setStream(name, true); if (onOpen) onOpen(); };
      ws.onmessage = (m) => {
        let msg;
        try { msg = JSON.parse(m.data); } catch (e) { return; }
        onMessage(msg);
      };
      ws.onclose = () => {
        setStream(name, false);
        ws = null;
        if (closed || moment()) return;
        setTimeout(open, delay);
        delay = Math.min(delay * 2, 10000);
      };
    }
    pausable.push({ pause() { if (ws) ws.close(); }, resume: open });
    setStream(name, false);
    open();
    function send(obj) {
      if (ws && ws.readyState === WebSocket.OPEN) { ws.send(JSON.stringify(obj)); return true; }
      return false;
    }
    send.reopen = () => {
      if (ws) { ws.onclose = null; ws.close(); ws = null; }
      delay = 500;
      open();
    };
    send.close = () => {
      closed = true;
      if (ws) { ws.onclose = null; ws.close(); ws = null; }
      streams.delete(name);
    };
    return send;
  }

  // --- server-rendered fragments ------------------------------------------------------------
  /** The latest swap asked for, per element id: an older answer arriving later is dropped. */
  const swaps = new Map();
  /**
   * Fetches url, a fragment the server renders from its templates, and puts its element of
   * the given id in place of the page's; or, given merge, calls merge(pageElement, fresh) to
   * make the page's like it in place. The fragment is parsed with DOMParser (never
   * innerHTML). Resolves true once swapped, false when a newer swap of the same id was asked
   * for meanwhile; rejects with the server's message when it answers with an error page.
   */
  function swap(url, id, merge) {
    const seq = (swaps.get(id) || 0) + 1;
    swaps.set(id, seq);
    // In the page's language, whatever another tab has switched the cookie to since.
    const headers = { Accept: 'text/html', 'X-Leaselab-Page-Lang': document.documentElement.lang };
    return fetch(url, { headers, cache: 'no-store' })
      .then((r) => r.text().then((html) => {
        const doc = new DOMParser().parseFromString(html, 'text/html');
        if (!r.ok) {
          const msg = doc.querySelector('[data-testid=error-message]');
          throw new Error(msg ? msg.textContent : 'HTTP ' + r.status);
        }
        const fresh = doc.getElementById(id);
        const cur = document.getElementById(id);
        if (swaps.get(id) !== seq || !fresh || !cur) return false;
        let now = fresh;
        if (merge) {
          merge(cur, fresh);
          now = cur;
        } else {
          cur.replaceWith(document.adoptNode(fresh));
        }
        updateRings();
        now.dispatchEvent(new CustomEvent('ll:swapped', { bubbles: true }));
        return true;
      }));
  }

  // --- countdown rings ----------------------------------------------------------------------
  const C = 2 * Math.PI * 42;
  /**
   * Drains every [data-ring] to data-expires (server clock, Unix ms) over data-duration
   * seconds. A held ring that reaches zero gets data-status="expired" and fires "ll:expired".
   */
  function updateRings() {
    const now = serverNow();
    for (const r of document.querySelectorAll('[data-ring]')) {
      // A page showing a past moment keeps its rings as the server drew them then.
      if (r.closest('[data-at]:not([data-at=""])')) continue;
      const exp = Number(r.dataset.expires) || 0;
      // The hold runs from data-since to data-expires: leaseDurationSeconds on the server's
      // clock, or of a lesson's clock at another speed.
      const since = Number(r.dataset.since) || 0;
      const dur = since && exp > since ? (exp - since) / 1000 : Number(r.dataset.duration) || 0;
      const status = r.dataset.status;
      let frac = 0;
      let label = '—';
      if (status !== 'free') {
        if (exp && dur) {
          const left = exp - now;
          frac = Math.max(0, Math.min(1, left / (dur * 1000)));
          label = left > 0 ? secs(left) : '0 s';
          if (left <= 0 && status === 'held' && r.dataset.firedFor !== String(exp)) {
            r.dataset.firedFor = String(exp);
            r.dataset.status = 'expired';
            r.dispatchEvent(new CustomEvent('ll:expired', { bubbles: true, detail: { expires: exp } }));
          }
        } else {
          frac = 1;
        }
      }
      const fill = r.querySelector('.ring-fill');
      if (fill) fill.setAttribute('stroke-dashoffset', (C * (1 - frac)).toFixed(2));
      const text = r.querySelector('.ring-text');
      if (text && text.textContent !== label) text.textContent = label;
    }
  }
  function loop() {
    if (!document.hidden) {
      updateRings();
      updateAges();
    }
    setTimeout(loop, reducedMotion.matches ? 1000 : 100);
  }

  // --- fault commands, shared by the candidate tab and the dashboard ------------------------
  /** The words of the fault buttons, in one place. */
  const faultWords = {
    pause: t('faults.pause'), resume: t('faults.resume'), heal: t('faults.heal'), partition: t('faults.partition'),
    failFast: t('faults.failFast'), slow: t('faults.slow'), slowOn: (ms) => t('faults.slowOn', delaySecs(ms)),
    inSync: t('faults.clockInSync'), offset: (s) => t('faults.clock', (s > 0 ? '+' : '') + s + ' s'),
    rate: (r) => t('faults.rate', r + '×'),
    loss: t('faults.loss'), lossOn: (p) => t('faults.lossOn', p),
  };
  /** The steps of the clock-rate fault ({ and }), within wasm/tabproto's MinClockRate..MaxClockRate. */
  const clockRates = [0.5, 0.67, 0.8, 1, 1.25, 1.5, 2];
  /** The shares of requests lost that the packet-loss fault steps through (L), up to wasm/tabproto's MaxLossPercent. */
  const lossSteps = [0, 10, 30, 50, 90];
  /** A tab's clock rate; reports carry 0 for the real rate. */
  function rateOf(f) { return (f && f.clockRate) || 1; }

  /**
   * The worker message for a fault button or key, given the tab's current faults: the same
   * button undoes what it did. opts.delayMs is the delay chosen for Slow (absent: the tab's
   * default for its timings).
   */
  function faultCommand(name, faults, opts) {
    const f = faults || {};
    const o = opts || {};
    switch (name) {
      case 'pause': return { type: f.paused ? 'resume' : 'pause' };
      case 'partition': return f.partition === 'hang' ? { type: 'heal' } : { type: 'partition', mode: 'hang' };
      case 'partition-fail': return f.partition === 'fail' ? { type: 'heal' } : { type: 'partition', mode: 'fail' };
      case 'slow':
        if (f.latencyMs > 0) return { type: 'slow', latencyMs: 0 };
        return o.delayMs > 0 ? { type: 'slow', latencyMs: o.delayMs } : { type: 'slow' };
      case 'clock-': return { type: 'clockOffset', seconds: Math.round((f.clockOffsetMs || 0) / 1000) - 1 };
      case 'clock+': return { type: 'clockOffset', seconds: Math.round((f.clockOffsetMs || 0) / 1000) + 1 };
      // In sync: the real rate first (a rate moves the clock on), then no offset.
      case 'clock-reset': return rateOf(f) !== 1 ? { type: 'clockRate', rate: 1 } : { type: 'clockOffset', seconds: 0 };
      case 'rate-': case 'rate+': {
        const r = rateOf(f);
        const next = name === 'rate+' ? clockRates.find((x) => x > r + 1e-9) : clockRates.slice().reverse().find((x) => x < r - 1e-9);
        return next ? { type: 'clockRate', rate: next } : null;
      }
      case 'loss': {
        const p = f.lossPercent || 0;
        return { type: 'loss', lossPercent: lossSteps.find((x) => x > p) || 0 };
      }
      case 'release': return { type: 'release' };
      case 'crash': return { type: 'crash' };
      case 'rejoin': return { type: 'rejoin' };
    }
    return null;
  }

  /**
   * The faults f as they will be once the candidate has carried out cmd (a command faultCommand
   * made): keys pressed faster than the candidate answers build on each other, not on the
   * last snapshot.
   */
  function afterCommand(f, cmd) {
    const n = Object.assign({}, f || {});
    switch (cmd.type) {
      case 'pause': n.paused = true; break;
      case 'resume': n.paused = false; break;
      case 'partition': n.partition = cmd.mode; break;
      case 'heal': n.partition = ''; break;
      case 'slow': n.latencyMs = cmd.latencyMs === undefined ? 1 : cmd.latencyMs; break;
      case 'clockOffset': n.clockOffsetMs = cmd.seconds * 1000; break;
      case 'clockRate': n.clockRate = cmd.rate; break;
      case 'loss': n.lossPercent = cmd.lossPercent; break;
    }
    return n;
  }

  /** Whether faults a are b in every field a command sets. */
  function sameFaults(a, b) {
    const k = (f) => [!!f.paused, f.partition || '', f.latencyMs > 0, f.clockOffsetMs || 0, rateOf(f), f.lossPercent || 0].join('|');
    return k(a || {}) === k(b || {});
  }

  /**
   * Shows a tab's faults on its fault buttons (pressed state and the label that undoes) and on
   * el's data-partition, data-latency-ms, data-clock-rate and data-loss-percent.
   */
  function showFaults(root, f, el) {
    f = f || {};
    const set = (cmd, on, onLabel, offLabel) => {
      const b = root.querySelector('[data-cmd="' + cmd + '"]');
      if (!b) return;
      b.setAttribute('aria-pressed', on ? 'true' : 'false');
      const l = b.querySelector('[data-label]');
      if (l && l.textContent !== (on ? onLabel : offLabel)) l.textContent = on ? onLabel : offLabel;
    };
    const W = faultWords;
    set('pause', !!f.paused, W.resume, W.pause);
    set('partition', f.partition === 'hang', W.heal, W.partition);
    set('partition-fail', f.partition === 'fail', W.heal, W.failFast);
    set('slow', f.latencyMs > 0, W.slowOn(f.latencyMs), W.slow);
    set('loss', f.lossPercent > 0, W.lossOn(f.lossPercent), W.loss);
    const ms = f.clockOffsetMs || 0;
    setText(root, 'offset', ms ? W.offset(ms / 1000) : W.inSync);
    const off = field(root, 'offset');
    if (off) off.classList.toggle('active', ms !== 0);
    const rate = rateOf(f);
    setText(root, 'rate', W.rate(rate));
    const r = field(root, 'rate');
    if (r) r.classList.toggle('active', rate !== 1);
    for (const [cmd, bound] of [['rate-', clockRates[0]], ['rate+', clockRates[clockRates.length - 1]]]) {
      const b = root.querySelector('[data-cmd="' + cmd + '"]');
      if (b) b.disabled = Math.abs(rate - bound) < 1e-9;
    }
    if (el) {
      el.dataset.partition = f.partition || '';
      el.dataset.latencyMs = String(f.latencyMs || 0);
      el.dataset.clockRate = String(rate);
      el.dataset.lossPercent = String(f.lossPercent || 0);
    }
  }

  /**
   * Disables, and marks aria-disabled, the fault buttons under root that cannot act on a tab
   * in state: a stopped tab cannot pause, release or crash (Rejoin starts it again); a running
   * one cannot rejoin. The other faults can: a stopped tab keeps them when it rejoins. A key
   * for a disabled control still reaches the candidate, which logs why nothing happened.
   */
  function showActionable(root, state) {
    const stopped = state === 'stopped';
    for (const b of root.querySelectorAll('[data-cmd]')) {
      const cmd = b.dataset.cmd;
      if (!['pause', 'release', 'crash', 'rejoin'].includes(cmd)) continue;
      const dead = stopped ? cmd !== 'rejoin' : cmd === 'rejoin';
      b.disabled = dead;
      if (dead) b.setAttribute('aria-disabled', 'true');
      else b.removeAttribute('aria-disabled');
    }
  }

  const words = {};
  for (const st of ['leader', 'follower', 'paused', 'partitioned', 'stopped', 'stale', 'held', 'free', 'expired']) words[st] = t('state.' + st);

  // Who the page is for (workshop mode), as the server rendered it on the body: a form that
  // writes starts in a namespace the user may write in, as the server renders it.
  const body = document.body.dataset;
  const writesIn = (body.writesIn || '').split(' ').filter(Boolean);
  /** Whether the page's user may write leases in ns: anywhere without a workshop. */
  function mayWrite(ns) { return writesIn.length === 0 || writesIn.includes(ns); }
  /** The namespace a form that writes starts with: ns when writable, else the user's own. */
  function writeNamespace(ns) { return ns && mayWrite(ns) ? ns : writesIn[0] || 'default'; }

  // Forms that destroy something ask first.
  document.addEventListener('submit', (e) => {
    const f = e.target;
    if (f instanceof HTMLFormElement && f.dataset.confirm && !window.confirm(f.dataset.confirm)) e.preventDefault();
  });

  // --- following the instructor ---------------------------------------------------------------
  // A participant who looked away from /follow (a lease page, a scrub, another lesson) comes back
  // to what the instructor shows with one key, Home, from any page this tab reached from it.
  try { if (location.pathname === '/follow') sessionStorage.setItem('leaselab.follow', '1'); } catch (_) { /* no storage */ }
  document.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Home' || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.target instanceof Element && ev.target.closest('input, select, textarea')) return;
    let following = false;
    try { following = sessionStorage.getItem('leaselab.follow') === '1'; } catch (_) { /* no storage */ }
    if (!following) return;
    ev.preventDefault();
    location.assign('/follow');
  });

  window.LL = { serverNow, secs, delaySecs, clock, ago, field, setText, watch, socket, swap, moment, setMoment, connected, onConnection, updateRings, faultCommand, afterCommand, sameFaults, showFaults, showActionable, words, t, has, msg, list, writeNamespace };
  showConnection();
  updateRings();
  loop();
})();
