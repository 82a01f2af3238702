// scrub.js: the time control of the dashboard and the lease page (the timeControl template).
// Pause on a moment or go back to live (L), a slider over the recorded window with its events
// as ticks, the previous and next event (← →), and play from the moment shown (space) at a
// chosen speed. The window and its events come from the server (/ui/moments), and so does the
// rendering of each moment (the page's fragment with ?at=, swapped in by LL.swap): this script
// judges nothing. The page's URL follows the moment shown (?at=), so that it can be shared.
'use strict';
(function () {
  const bar = document.getElementById('timebar');
  if (!bar) return;
  const LL = window.LL;
  const $ = (name) => bar.querySelector('[data-scrub="' + name + '"]');
  const slider = $('slider');
  const speed = $('speed');

  let from = 0; // the recorded window, on the server's clock (Unix ms)
  let to = 0;
  let moments = []; // the events in it, oldest first: {ms, kind, text}
  let loaded = 0; // when they were last read (Date.now())
  let at = Date.parse(bar.dataset.at) || 0; // the moment shown; 0 while live
  let playing = null; // while playing: the moment it started from and when (performance.now())
  let rendered = at; // the moment whose rendering was asked for last
  let inflight = false;

  const iso = (ms) => new Date(ms).toISOString();

  /** A moment as the control shows it: "14:02:11.3". */
  function clockText(ms) {
    // Rounded to the tenth, as the server's sentences say their times.
    const r = Math.round(ms / 100) * 100;
    return LL.clock(r) + '.' + Math.floor((r % 1000) / 100);
  }

  /** Says something to the reader (and to screen readers: the status is a live region). */
  function say(text) {
    $('status').textContent = text;
    $('status').title = text; // the bar shows two lines of it
  }

  /** Reads the recorded window and its events, at most every two seconds. */
  function load() {
    if (Date.now() - loaded < 2000) return Promise.resolve();
    loaded = Date.now();
    clearTimeout(reloadTimer);
    reloadTimer = 0;
    const headers = { Accept: 'application/json', 'X-Leaselab-Page-Lang': document.documentElement.lang };
    return fetch(bar.dataset.momentsUrl, { headers, cache: 'no-store' })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error('HTTP ' + r.status))))
      .then((m) => {
        from = Date.parse(m.from);
        to = Math.max(Date.parse(m.to), at, at ? 0 : Math.round(LL.serverNow()));
        moments = (m.moments || []).map((e) => ({ ms: Date.parse(e.at), kind: e.kind, text: e.text }));
        drawTicks();
        draw();
      })
      .catch((e) => say(LL.t('js.couldNotReadHistory', e.message)));
  }

  /**
   * Reads the window and its events again soon: something happened while live (a feed line,
   * a candidate's role, the page's live part swapped in). At most every two seconds, and the
   * last of a burst is not lost.
   */
  let reloadTimer = 0;
  function reloadSoon() {
    if (at || reloadTimer) return;
    reloadTimer = setTimeout(() => { reloadTimer = 0; if (!at) load(); }, Math.max(50, 2000 - (Date.now() - loaded)));
  }

  /** Marks each event on the track, where the slider reaches it. */
  function drawTicks() {
    const ticks = moments.map((e) => {
      const t = document.createElement('span');
      t.className = 'tick tick-' + e.kind;
      t.title = clockText(e.ms) + ' ' + e.text;
      t.dataset.ms = String(e.ms);
      return t;
    });
    $('ticks').replaceChildren(...ticks);
    placeTicks();
  }

  /** Sets the slider's range to the window and puts each tick where the slider reaches it. */
  function placeTicks() {
    // The end on a step of the slider (a tenth of a second): live, the thumb then sits at the
    // very end, as it could not at an end between two steps (5 % short in a window of 2 s).
    const span = Math.ceil(Math.max(1, to - from) / 100) * 100;
    slider.min = String(from);
    slider.max = String(from + span);
    for (const t of $('ticks').children) t.style.left = ((100 * (Number(t.dataset.ms) - from)) / span).toFixed(3) + '%';
  }

  /** While live, the window ends now: its end and the thumb move on with the clock. */
  function followNow() {
    if (at || !from) return;
    to = Math.max(to, Math.round(LL.serverNow()));
    placeTicks();
  }

  /** Shows the state of the control: live or the moment shown, playing or not. */
  function draw() {
    bar.classList.toggle('timebar-past', !!at);
    $('live').querySelector('[data-label]').textContent = at ? LL.t('js.live') : LL.t('time.pause');
    $('play').querySelector('[data-label]').textContent = playing ? LL.t('time.stop') : LL.t('time.play');
    $('play').setAttribute('aria-pressed', playing ? 'true' : 'false');
    slider.value = at ? String(at) : slider.max;
    if (at) {
      // The age is kept current as the moment banner's is (data-ago), so that both read alike.
      const [before, after = ''] = LL.t('js.showing', '\u0001').split('\u0001');
      const age = document.createElement('span');
      age.dataset.ago = iso(at);
      age.textContent = LL.ago(at);
      $('shown').replaceChildren(before + clockText(at) + ' — ', age, after);
      slider.setAttribute('aria-valuetext', clockText(at) + ' — ' + age.textContent);
    } else {
      // A replay's newest moment is the end of its recording, not now.
      $('shown').textContent = LL.t(document.body.hasAttribute('data-replay') ? 'time.liveReplay' : 'time.live');
      slider.setAttribute('aria-valuetext', LL.t('js.liveAria'));
    }
  }

  /** Shows the moment ms: the page's rendering of it, and the URL that leads to it. */
  function show(ms) {
    at = Math.min(Math.max(ms, from || ms), LL.serverNow());
    if (at > to) to = at;
    LL.setMoment(iso(at));
    const u = new URL(location.href);
    u.searchParams.set('at', iso(at));
    history.replaceState(null, '', u.href);
    draw();
    render();
  }

  /** Fetches the rendering of the moment shown, one at a time: the newest wanted wins. */
  function render() {
    if (inflight || !at || rendered === at) return;
    inflight = true;
    rendered = at;
    const base = bar.dataset.fragmentUrl;
    const url = base + (base.includes('?') ? '&' : '?') + 'at=' + encodeURIComponent(iso(at));
    LL.swap(url, bar.dataset.target)
      .catch((e) => { stop(); say(e.message); })
      .finally(() => { inflight = false; render(); });
  }

  /** Back to live: the dashboard loads itself again, the lease page follows its streams. */
  function live() {
    stop();
    at = 0;
    rendered = 0;
    const u = new URL(location.href);
    u.searchParams.delete('at');
    if (bar.dataset.reloadLive === 'true') { location.assign(u.href); return; }
    history.replaceState(null, '', u.href);
    LL.setMoment('');
    draw();
    say(LL.t('js.live'));
  }

  function pause() {
    show(LL.serverNow());
    say(LL.t('js.pausedAt', clockText(at)));
    loaded = 0;
    load();
  }

  /** Shows the previous (dir -1) or the next (dir 1) event. Events of one instant (a split
   *  brain's end and the roles that ended it) are stepped through one by one: stepped is the
   *  event last stepped to, while the moment shown is still its instant. */
  let stepped = -1;
  function step(dir) {
    stop();
    load().then(() => {
      const cur = at || LL.serverNow();
      let i;
      if (at && moments[stepped] && moments[stepped].ms === at && moments[stepped + dir] && moments[stepped + dir].ms === at) {
        i = stepped + dir;
      } else if (dir < 0) {
        i = moments.findLastIndex((m) => m.ms < cur);
      } else {
        i = moments.findIndex((m) => m.ms > cur);
      }
      if (i < 0) {
        say(LL.t(dir < 0 ? 'js.noEarlier' : 'js.noLater'));
        return;
      }
      const e = moments[i];
      show(e.ms);
      stepped = i;
      say(clockText(e.ms) + ': ' + e.text);
    });
  }

  /** Plays from the moment shown (live: from the start of the window) until it reaches now. */
  function play() {
    say('');
    if (!at) show(from || LL.serverNow());
    playing = { ms: at, wall: performance.now() };
    draw();
    advance();
  }

  function advance() {
    if (!playing) return;
    const ms = playing.ms + (performance.now() - playing.wall) * Number(speed.value);
    if (ms >= LL.serverNow()) { live(); return; }
    show(ms);
    if (ms > to) load();
    setTimeout(advance, 100);
  }

  function stop() {
    if (!playing) return;
    playing = null;
    draw();
  }

  const toggleLive = () => (at ? live() : pause());
  const togglePlay = () => (playing ? stop() : play());

  $('live').addEventListener('click', toggleLive);
  $('play').addEventListener('click', togglePlay);
  $('prev').addEventListener('click', () => step(-1));
  $('next').addEventListener('click', () => step(1));
  speed.addEventListener('change', () => { if (playing) playing = { ms: at, wall: performance.now() }; });
  slider.addEventListener('input', () => { stop(); say(''); show(Number(slider.value)); });
  $('ticks').addEventListener('click', (e) => {
    const t = e.target.closest('.tick');
    if (t) { stop(); show(Number(t.dataset.ms)); say(t.title); }
  });
  $('copy').addEventListener('click', () => {
    const u = new URL(location.href);
    u.searchParams.set('at', iso(at || LL.serverNow()));
    const copied = navigator.clipboard ? navigator.clipboard.writeText(u.href) : Promise.reject(new Error('no clipboard'));
    copied.then(() => say(LL.t('js.linkCopied', u.href)), () => say(LL.t('js.copyThis', u.href)));
  });

  // Keys, unless the reader is typing or a button takes the key itself. The bar's own slider
  // takes the bar's keys too: once clicked it keeps the focus, and its arrows then step from
  // event to event as the bar's buttons do, not by the slider's 0.1 s.
  let handled = '';
  document.addEventListener('keydown', (e) => {
    handled = '';
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
    const t = e.target instanceof Element ? e.target : document.body;
    if (t !== slider && t.closest('input, select, textarea, [contenteditable]:not([contenteditable="false"])')) return;
    if (e.key === 'l' || e.key === 'L') toggleLive();
    else if (e.key === 'ArrowLeft') step(-1);
    else if (e.key === 'ArrowRight') step(1);
    else if (e.key === ' ' && !t.closest('button, a, summary')) togglePlay();
    else return;
    e.preventDefault();
    handled = e.key;
  });
  // A key handled above has no keypress in a browser; a synthetic one may still come, and a
  // space's would scroll the page away from the bar.
  document.addEventListener('keypress', (e) => {
    if (e.key === handled) e.preventDefault();
    handled = '';
  });

  // While live, what the page is told of (the dashboard's feed and tabs, the lease page's live
  // part swapped in) may be a new event: read the events again.
  document.addEventListener('ll:history', reloadSoon);
  document.addEventListener('ll:swapped', reloadSoon);

  bar.hidden = false;
  load();
  draw();
  // Ages move on, and so does the end of the window while live; the events are read again
  // now and then in case one came that the page was not told of (a split brain known late).
  let beats = 0;
  setInterval(() => {
    if (document.hidden || playing) return;
    followNow();
    draw();
    if (!at && ++beats % 15 === 0) reloadSoon();
  }, 1000);
})();
