// play.js: one candidate tab. Starts the wasm candidate in a dedicated Web Worker, shows every
// snapshot it posts (role, countdown bars, faults, decision log), sends fault commands from the
// buttons and keys, and reports the tab to the server's tab hub, from which the instructor's
// fault commands arrive.
'use strict';
(function () {
  const cfgEl = document.getElementById('play-config');
  if (!cfgEl) return;
  const LL = window.LL;
  const cfg = JSON.parse(cfgEl.textContent);
  const $ = (id) => document.getElementById(id);
  const cand = $('candidate');
  const faultbar = document.querySelector('[data-testid="faultbar"]');
  const slider = $('offset-slider');
  const delaySlider = $('delay-slider');
  /** The delays Slow offers, each with what it does at this tab's timings (web/play/ui decides it). */
  const delays = (cfg.slow && cfg.slow.choices) || [];

  const t = LL.t;
  const explain = {
    leader: (s) => (s.coordinated && s.preferredHolder && s.preferredHolder !== s.identity
      ? t('js.explainStepDown', s.preferredHolder)
      : t('js.explainLeader', LL.secs(s.timings.retryPeriodMs))),
    follower: (s) => (s.coordinated
      ? (s.holder && s.holder !== s.identity ? t('js.explainCoordHeld', s.holder) : t('js.explainCoordWait'))
      : (s.holder && s.holder !== s.identity ? t('js.explainHeld', s.holder) : t('js.explainFree'))),
    paused: () => t('js.explainPaused'),
    partitioned: (s) => (s.faults.partition === 'fail' ? t('js.explainPartitionedFail') : t('js.explainPartitioned')),
    stopped: (s) => (s.stopReason ? t('js.explainStopReason', stopReason(s.stopReason)) : t('js.explainStopped')) + t('js.rejoinWithJ'),
  };

  /** Why the candidate stopped, in the page's language. */
  function stopReason(r) { return LL.has('js.stopReason.' + r) ? t('js.stopReason.' + r) : r; }

  function setDisabled(on) {
    for (const b of faultbar.querySelectorAll('button')) b.disabled = on;
    slider.disabled = on;
    delaySlider.disabled = on || !delays.length;
  }

  if (cfg.disabled) {
    setDisabled(true);
    return;
  }

  // Switching the language loads the page again. The candidate comes back under the same
  // identity, and so renews the lease it held instead of leaving it to expire: client-go
  // takes a record that names itself as its own. The identity rides in the URL of that one
  // navigation only (rejoin=1): the link itself never carries it, so that the link opened in
  // another tab, a copy of it or a duplicate of this tab is a candidate of its own.
  const here = new URL(location.href);
  const langSwitch = document.querySelector('[data-testid="lang-switch"]');
  const rejoined = here.searchParams.get('rejoin') === '1';
  const strip = (href) => {
    const u = new URL(href, location.href);
    u.searchParams.delete('identity');
    u.searchParams.delete('rejoin');
    return u.href;
  };
  // The decision log comes across the switch too: kept in this tab's session storage for the
  // one navigation, then shown after the new page's own lines.
  const savedLog = 'leaselab.log.' + cfg.start.identity;
  let earlierLog = [];
  if (rejoined) {
    history.replaceState(null, '', strip(location.href));
    if (langSwitch) langSwitch.href = strip(langSwitch.href);
    try { earlierLog = JSON.parse(sessionStorage.getItem(savedLog) || '[]'); } catch (_) { earlierLog = []; }
  }
  try { sessionStorage.removeItem(savedLog); } catch (_) { /* storage off: nothing kept */ }
  if (langSwitch && (rejoined || !here.searchParams.has('identity'))) {
    langSwitch.addEventListener('click', (e) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      const to = new URL(langSwitch.href, location.href);
      to.searchParams.set('identity', cfg.start.identity);
      to.searchParams.set('rejoin', '1');
      try { sessionStorage.setItem(savedLog, JSON.stringify(((snap && snap.log) || []).concat(earlierLog).slice(0, 60))); } catch (_) { /* the log starts again */ }
      location.assign(to.href);
    });
  }

  let snap = null;
  let tabReport = null; // what the hub is told: the candidate makes it (wasm/tabproto.Report)
  let candOffset = 0; // the candidate's clock minus the browser's

  // --- the worker ---------------------------------------------------------------------------
  // The candidate's wasm has been on its way since the head's preload (the largest file by
  // far, so the first asked for): this fetch takes that response over.
  const wasm = fetch(cfg.wasmURL);
  const worker = new Worker(cfg.workerURL);
  worker.onmessage = (e) => {
    const m = e.data || {};
    switch (m.type) {
      case 'ready':
        worker.postMessage({ type: 'start', config: cfg.start });
        break;
      case 'snapshot':
        snap = m.snapshot;
        if (ahead && LL.sameFaults(snap.faults, ahead.faults)) ahead = null;
        tabReport = m.report;
        candOffset = snap.now - Date.now();
        render();
        report();
        break;
      case 'error':
        showError(m.error + (m.problems && m.problems.length ? ': ' + m.problems.join('; ') : ''));
        break;
      case 'fatal': {
        const err = m.key ? t(m.key, m.detail || '') : m.error;
        showError(err);
        setState('stopped', LL.words.stopped, t('js.notRunning', err));
        break;
      }
      case 'lag':
        showLag(m.lateMs);
        break;
    }
  };
  worker.onerror = (e) => {
    showError(t('js.workerFailed', e.message || t('js.unknownError')));
    setState('stopped', LL.words.stopped, t('js.workerFailedShort'));
  };
  worker.postMessage({ type: 'boot', wasmExec: cfg.wasmExecURL, wasm: cfg.wasmURL });
  handOver(wasm);
  setDisabled(true);

  /** Hands the wasm's response to the worker: its body as it comes where a stream can be handed
   *  over, else whole once it is in; on a failure the worker fetches it itself. */
  function handOver(pending) {
    pending.then((r) => {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      try {
        worker.postMessage({ type: 'wasm', body: r.body }, [r.body]);
      } catch (_) {
        return r.arrayBuffer().then((b) => worker.postMessage({ type: 'wasm', bytes: b }, [b]));
      }
      return null;
    }).catch((err) => worker.postMessage({ type: 'wasm', error: String((err && err.message) || err) }));
  }

  // The faults the commands sent will give, until a snapshot shows them (or a second and a half
  // passes: a command the candidate refused): ] pressed three times quickly is +3 s, not +1 s.
  let ahead = null;
  function send(name) {
    if (!snap) return;
    const base = ahead && Date.now() < ahead.until ? ahead.faults : snap.faults;
    const cmd = LL.faultCommand(name, base, { delayMs: chosenDelay().ms });
    if (!cmd) return;
    worker.postMessage(cmd);
    ahead = { faults: LL.afterCommand(base, cmd), until: Date.now() + 1500 };
    if (name === 'clock-reset' && cmd.type === 'clockRate') send(name); // then the offset
  }

  // --- the network delay: S toggles Slow at the delay chosen here ---------------------------
  function chosenDelay() { return delays[Number(delaySlider.value)] || {}; }
  function showDelay() {
    const d = chosenDelay();
    $('delay-value').textContent = d.label || '';
    delaySlider.setAttribute('aria-valuetext', d.label || ''); // "8.0 s", not the choice's index
    $('delay-effect').textContent = d.effect || '';
    delaySlider.parentElement.title = d.effect || '';
    const b = faultbar.querySelector('[data-cmd="slow"]');
    if (b) b.title = d.effect ? t('faults.slowEffect', d.label, d.effect) : '';
  }
  /** Chooses the delay at index i; a slow network already on takes it at once. */
  function chooseDelay(i) {
    delaySlider.value = String((i + delays.length) % delays.length);
    showDelay();
    if (snap && snap.faults.latencyMs > 0) worker.postMessage({ type: 'slow', latencyMs: chosenDelay().ms });
  }
  delaySlider.addEventListener('input', showDelay);
  delaySlider.addEventListener('change', () => chooseDelay(Number(delaySlider.value)));
  showDelay();

  // --- rendering ----------------------------------------------------------------------------
  function setState(state, word, text) {
    cand.dataset.state = state;
    for (const c of Array.from(cand.classList)) if (c.startsWith('state-')) cand.classList.remove(c);
    cand.classList.add('state-' + state);
    $('role-icon').setAttribute('href', '#i-' + state);
    $('role-word').textContent = word;
    $('role-explain').textContent = text;
  }

  function render() {
    const s = snap;
    setDisabled(false);
    if (s.stale) {
      // The candidate decided it: it believes it leads while the record names another holder.
      setState(s.state, t('js.staleLeader'), t('js.staleExplain', s.holder));
      $('role-icon').setAttribute('href', '#i-conflict');
    } else {
      setState(s.state, LL.words[s.state] || s.state.toUpperCase(), (explain[s.state] || (() => ''))(s));
    }
    cand.dataset.stale = s.stale ? 'true' : 'false';
    cand.classList.toggle('stale', !!s.stale);
    document.title = (s.stale ? t('js.staleLeader') : LL.words[s.state] || s.state) + ' · ' + s.identity + ' · leaselab';
    // A fresh candidate (just started, rejoined or starting over) has read no record yet.
    const seen = s.observedAt > 0;
    $('holder').textContent = seen ? s.holder || t('js.nobody') : t('js.nothingObserved');
    $('transitions').textContent = seen ? String(s.transitions) : '—';
    const pref = $('preferred-holder');
    if (pref) pref.textContent = s.preferredHolder || t('js.nobody');
    LL.showFaults(faultbar.parentElement, s.faults, cand);
    LL.showActionable(faultbar, s.state);
    slider.value = String(Math.round((s.faults.clockOffsetMs || 0) / 1000));
    speakOffset();
    // A delay set from the dashboard shows here too.
    const i = delays.findIndex((d) => d.ms === s.faults.latencyMs);
    if (i >= 0 && String(i) !== delaySlider.value && document.activeElement !== delaySlider) {
      delaySlider.value = String(i);
      showDelay();
    }
    $('active-faults').textContent = s.activeFaults && s.activeFaults.length ? activeFaults(s) : t('js.none');
    renderLog((s.log || []).concat(earlierLog));
    drawBars();
  }

  /** The active faults in the page's language, as the candidate words them. */
  function activeFaults(s) {
    const ms = s.activeFaultsMsg || [];
    if (ms.length !== s.activeFaults.length) return s.activeFaults.join(', ');
    return LL.list(ms.map((m, i) => LL.msg(m, s.activeFaults[i])));
  }

  const logList = $('log');
  function renderLog(entries) {
    const n = Math.min(entries.length, 60);
    while (logList.children.length > n) logList.lastElementChild.remove();
    for (let i = 0; i < n; i++) {
      const e = entries[i];
      let li = logList.children[i];
      if (!li) {
        li = document.createElement('li');
        const tm = document.createElement('time');
        const k = document.createElement('span');
        k.className = 'log-kind';
        const x = document.createElement('span');
        x.className = 'log-text';
        const c = document.createElement('span');
        c.className = 'log-count';
        li.append(tm, k, x, c);
        logList.appendChild(li);
      }
      li.className = 'log-' + e.kind;
      li.dataset.kind = e.kind;
      const [tm, k, x, c] = li.children;
      tm.textContent = LL.clock(e.at);
      k.textContent = LL.has('js.logkind.' + e.kind) ? t('js.logkind.' + e.kind) : e.kind;
      x.textContent = LL.msg(e.msg, e.text);
      c.textContent = e.count > 1 ? '×' + e.count : '';
    }
  }

  /** Draws one bar: remaining ms out of full ms, and the next-retry notch. */
  function bar(id, remaining, full, retryIn, visible, overText) {
    const el = $('bar-' + id);
    el.hidden = !visible;
    if (!visible) return;
    const fill = LL.field(el, 'fill');
    const tick = LL.field(el, 'tick');
    const value = LL.field(el, 'value');
    if (remaining === null || !full) {
      fill.style.transform = 'scaleX(0)';
      value.textContent = '—';
      tick.hidden = true;
      el.classList.remove('low', 'over');
      return;
    }
    const f = Math.max(0, Math.min(1, remaining / full));
    fill.style.transform = 'scaleX(' + f.toFixed(4) + ')';
    value.textContent = remaining > 0 ? LL.secs(remaining) : overText || t('js.expiredAgo', LL.secs(-remaining));
    el.classList.toggle('over', remaining <= 0);
    el.classList.toggle('low', remaining > 0 && f < 0.3);
    if (retryIn !== null && retryIn >= 0 && retryIn <= full) {
      tick.hidden = false;
      tick.style.left = ((retryIn / full) * 100).toFixed(2) + '%';
    } else {
      tick.hidden = true;
    }
  }

  function drawBars() {
    if (!snap) return;
    const s = snap;
    const now = Date.now() + candOffset;
    const L = s.timings.leaseDurationMs;
    const retryIn = s.nextRetry ? s.nextRetry - now : null;
    bar('observed', s.observedExpiry ? s.observedExpiry - now : null, L, retryIn, true);
    bar('record', s.recordExpiry ? s.recordExpiry - now : null, L, retryIn, true);
    const leading = s.role === 'leader' && s.renewDeadline > 0;
    // The deadline the elector acts on: the running renew round's, fixed, draining while the
    // round tries; between rounds the next round's, shown full at the setting until the round
    // begins at the next-try notch. A leader paused between rounds begins its round when it
    // resumes; one paused in a round gives up as soon as it resumes once the deadline passed.
    const RD = s.timings.renewDeadlineMs;
    let left = leading ? Math.min(s.renewDeadline - now, RD) : null;
    if (leading && s.state === 'paused' && !s.renewRound) left = RD;
    const over = s.state === 'paused' ? t('js.deadlinePassedPaused') : t('js.lastTries');
    bar('deadline', left, RD, retryIn, leading, over);
    if (leading && s.state === 'paused' && !s.renewRound) LL.field($('bar-deadline'), 'value').textContent = t('js.deadlineOnResume', LL.secs(RD));
    const nr = $('next-retry');
    let text = '—';
    if (s.state === 'stopped') text = t('js.noneStopped');
    else if (s.state === 'paused') text = t('js.nonePaused');
    // Past its time, the try is under way: its request is in flight until it is answered or cut off.
    else if (retryIn !== null) text = retryIn > 0 ? t('js.in', LL.secs(retryIn)) : retryIn > -500 ? t('js.now') : t('js.inFlight', LL.secs(-retryIn));
    if (nr.textContent !== text) nr.textContent = text;
  }

  const reducedMotion = window.matchMedia('(prefers-reduced-motion: reduce)');
  function frame() {
    if (!document.hidden) drawBars();
    setTimeout(frame, reducedMotion.matches ? 1000 : 100);
  }
  frame();
  // A tab brought to the front shows its timers as they are now, not as they were when it was
  // last seen (a hidden page draws nothing).
  document.addEventListener('visibilitychange', () => { if (!document.hidden) drawBars(); });

  // --- warnings -----------------------------------------------------------------------------
  function showError(text) {
    const el = $('worker-error');
    el.textContent = text;
    el.hidden = false;
  }

  function showLag(ms) {
    const el = $('lag-warning');
    el.textContent = t('js.lag', LL.clock(Date.now()), LL.secs(ms));
    el.hidden = false;
  }

  // --- buttons and keys ---------------------------------------------------------------------
  faultbar.addEventListener('click', (e) => {
    const b = e.target.closest('[data-cmd]');
    if (b) send(b.dataset.cmd);
  });
  /** The clock offset slider's value as a screen reader says it: "+3 s". */
  function speakOffset() {
    const v = Number(slider.value);
    slider.setAttribute('aria-valuetext', (v > 0 ? '+' : '') + v + ' s');
  }
  slider.addEventListener('input', speakOffset);
  speakOffset();
  slider.addEventListener('change', () => {
    worker.postMessage({ type: 'clockOffset', seconds: Number(slider.value) });
  });
  // The keys are the fault buttons' own (data-key: "p", or "shift+n" for Shift+N), and Shift+S,
  // which picks the next delay on the page's slider.
  const keys = {};
  const shiftKeys = { s: 'delay-next' };
  for (const b of faultbar.querySelectorAll('[data-cmd][data-key]')) {
    const k = b.dataset.key;
    if (k.startsWith('shift+')) shiftKeys[k.slice(6)] = b.dataset.cmd;
    else keys[k] = b.dataset.cmd;
  }
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t instanceof HTMLInputElement && t.type !== 'range' || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement) return;
    const k = e.key.toLowerCase();
    const name = (e.shiftKey && shiftKeys[k]) || keys[k];
    if (!name || !snap) return;
    e.preventDefault();
    if (name === 'delay-next') chooseDelay(Number(delaySlider.value) + 1);
    else send(name);
  });

  // --- the tab hub --------------------------------------------------------------------------
  const hubSend = LL.socket('hub', '/ui/tabs/connect', (msg) => {
    if (msg.type === 'hello') cand.dataset.tabId = msg.id;
    if (msg.type === 'command' && msg.command) {
      // The candidate obeys only fault commands (wasm/tabproto decides which).
      worker.postMessage({ type: 'remote', command: msg.command });
      const note = $('remote-note');
      note.textContent = msg.from
        ? t('js.remoteSentBy', LL.clock(Date.now()), msg.from, commandWords(msg.command))
        : t('js.remoteSent', LL.clock(Date.now()), commandWords(msg.command));
      note.hidden = false;
      // Said for a while, not for good: the faults panel says what is on now.
      clearTimeout(noteTimer);
      noteTimer = setTimeout(() => { note.hidden = true; }, 10000);
    }
  }, () => { lastSent = 0; report(); });

  // --- leaving the page ---------------------------------------------------------------------
  // A page left for another (also one the browser keeps in its back-forward cache, where its
  // worker and sockets would live on, frozen) stops its candidate and leaves the hub at once,
  // as a closed tab does. Coming back to it from that cache starts afresh, as a restarted
  // process would.
  window.addEventListener('pagehide', () => {
    worker.terminate();
    hubSend.close();
  });
  window.addEventListener('pageshow', (e) => {
    if (e.persisted) location.reload();
  });

  let noteTimer = 0;
  /** What a command from the dashboard does, in the page's language: "network back to normal speed". */
  function commandWords(c) {
    switch (c.type) {
      case 'slow':
        if (c.latencyMs === 0) return t('js.cmd.slowOff');
        return c.latencyMs > 0 ? t('js.cmd.slowOn', LL.delaySecs(c.latencyMs)) : t('js.cmd.slowAuto');
      case 'partition': return t(c.mode === 'fail' ? 'js.cmd.partitionFail' : 'js.cmd.partitionHang');
      case 'clockOffset': return t('js.cmd.clockOffsetTo', (c.seconds > 0 ? '+' : '') + c.seconds + ' s');
      case 'clockRate': return t('js.cmd.clockRateTo', c.rate + '×');
    }
    // Any other command's words take its values, in the order it names them.
    const values = Object.keys(c).filter((k) => k !== 'type').map((k) => c[k]);
    return LL.has('js.cmd.' + c.type) ? t('js.cmd.' + c.type, ...values) : c.type;
  }

  let lastSent = 0;
  let pending = 0;
  /** Reports the tab to the hub: at most four times a second, always the latest state. */
  function report() {
    if (!tabReport) return;
    const wait = 250 - (Date.now() - lastSent);
    if (wait > 0) {
      if (!pending) pending = setTimeout(() => { pending = 0; report(); }, wait);
      return;
    }
    lastSent = Date.now();
    hubSend({ type: 'report', tab: tabReport });
  }
})();
