// dashboard.js: keeps the server-rendered dashboard current. The lease cards, the feed and the
// LeaseCandidates come from the board (/ui/board/watch), as the server judged them; namespaces
// from the API's watch (WebSocket); the connected candidate tabs and the election controller's
// latest decisions from the tab hub's stream, which also carries the instructor's fault
// commands to a tab. It draws what it is sent and decides no lease rule of its own. A page
// that shows a past moment (/?at=, or the time control) follows none of these streams.
'use strict';
(function () {
  const root = document.getElementById('dashboard');
  if (!root) return;
  const LL = window.LL;
  const grid = document.getElementById('lease-grid');
  const feedList = document.getElementById('feed');
  const tabsList = document.getElementById('tabs');
  const candBody = document.getElementById('candidates');
  const electBody = document.getElementById('elections');
  const electPanel = document.querySelector('[data-testid=elections]');
  const filter = document.getElementById('ns-filter');
  const openTabNS = document.getElementById('open-tab-namespace');
  const newLeaseNS = document.getElementById('new-lease-namespace');
  const room = document.getElementById('room'); // the instructor's, in workshop mode
  const download = document.getElementById('download-recording');
  const leaseNames = document.getElementById('lease-names');
  let nsFilter = filter.value;

  const key = (ns, name) => ns + '/' + name;
  const enc = encodeURIComponent;

  // --- leases -------------------------------------------------------------------------------
  // The server judges every lease (web/lease/judge): its status, when its hold runs out, and what each
  // change did, as feed lines. This script draws the board it pushes and decides nothing.
  /** The cards by lease key. */
  const leases = new Map();
  for (const card of grid.querySelectorAll('[data-lease-card]')) {
    leases.set(key(card.dataset.namespace, card.dataset.name), card);
  }

  function setStatus(card, status) {
    for (const c of Array.from(card.classList)) if (c.startsWith('card-') && c !== 'card') card.classList.remove(c);
    card.classList.add('card-' + status);
    const s = LL.field(card, 'status');
    s.className = 'status status-' + status;
    s.querySelector('use').setAttribute('href', '#i-' + (status === 'held' ? 'leader' : status));
    LL.setText(card, 'status-word', LL.words[status]);
    card.querySelector('[data-ring]').dataset.status = status;
  }

  function newCard(ns, name) {
    const card = LL.fromTemplate('lease-card-template');
    card.dataset.namespace = ns;
    card.dataset.name = name;
    card.dataset.writable = String(LL.mayWrite(ns));
    LL.setText(card, 'namespace', ns);
    LL.setText(card, 'name', name);
    LL.field(card, 'link').setAttribute('href', '/leases/' + enc(ns) + '/' + enc(name));
    LL.field(card, 'play').setAttribute('href', '/play?namespace=' + enc(ns) + '&lease=' + enc(name));
    LL.field(card, 'stage').setAttribute('href', '/stage?namespace=' + enc(ns) + '&lease=' + enc(name));
    LL.field(card, 'delete').setAttribute('action', '/ui/leases/' + enc(ns) + '/' + enc(name) + '/delete');
    // Keep the grid sorted by namespace, then name, as the server renders it.
    let before = null;
    for (const c of grid.querySelectorAll('[data-lease-card]')) {
      if (key(c.dataset.namespace, c.dataset.name) > key(ns, name)) { before = c; break; }
    }
    grid.insertBefore(card, before);
    const opt = document.createElement('option');
    opt.value = name;
    leaseNames.appendChild(opt);
    return card;
  }

  /** Draws a card as the server judged it. */
  function drawCard(c) {
    const k = key(c.namespace, c.name);
    let card = leases.get(k);
    if (!card) { card = newCard(c.namespace, c.name); leases.set(k, card); }
    card.dataset.holder = c.holder;
    card.dataset.since = String(c.sinceMs);
    card.dataset.duration = String(c.durationSeconds);
    card.dataset.transitions = String(c.transitions);
    const h = LL.field(card, 'holder');
    h.textContent = c.holder || LL.t('dash.noHolder');
    h.classList.toggle('holder-empty', !c.holder);
    LL.setText(card, 'transitions', String(c.transitions));
    const cle = LL.field(card, 'cle');
    cle.hidden = !c.strategy;
    cle.setAttribute('title', LL.t('dash.cleTitle', c.strategy));
    const ring = card.querySelector('[data-ring]');
    ring.dataset.expires = String(c.expiresMs);
    ring.dataset.duration = String(c.durationSeconds);
    ring.dataset.since = String(c.sinceMs);
    delete ring.dataset.firedFor;
    setStatus(card, c.status);
    const split = LL.field(card, 'split');
    split.hidden = !c.overlaps;
    if (card.dataset.overlaps !== String(c.overlaps || 0)) {
      card.dataset.overlaps = String(c.overlaps || 0);
      roomSoon();
    }
    split.setAttribute('title', c.overlapText || '');
    LL.setText(card, 'split-text', c.overlaps === 1 ? LL.t('dash.splitBrain1') : LL.t('dash.splitBrains', c.overlaps));
    showCardConflict(card);
    card.hidden = !!nsFilter && card.dataset.namespace !== nsFilter;
  }

  /** Shows a CamelCase name (a strategy) with a place to break between its words, as the server
   *  renders it (wordBreaks): a narrow column breaks OldestEmulation / Version, not inside a word. */
  function setWords(el, s) {
    if (!el || el.textContent === s) return;
    el.replaceChildren(...s.split(/(?<=[a-z])(?=[A-Z])/).flatMap((w, i) => (i ? [document.createElement('wbr'), w] : [w])));
  }

  function removeCard(c) {
    const k = key(c.namespace, c.name);
    const card = leases.get(k);
    if (!card) return;
    card.remove();
    leases.delete(k);
    for (const opt of leaseNames.querySelectorAll('option')) if (opt.value === c.name) { opt.remove(); break; }
  }

  function onBoard(msg) {
    if (msg.reset) {
      const keep = new Set((msg.cards || []).map((c) => key(c.namespace, c.name)));
      for (const [k, card] of leases) if (!keep.has(k)) removeCard(card.dataset);
      feedList.replaceChildren();
      const keepCands = new Set((msg.candidates || []).map((c) => key(c.namespace, c.name)));
      for (const [k, row] of candidates) if (!keepCands.has(k)) removeCandidate(row.dataset);
    }
    for (const c of msg.cards || []) drawCard(c);
    for (const c of msg.gone || []) removeCard(c);
    for (const c of msg.candidates || []) drawCandidate(c);
    for (const c of msg.candidatesGone || []) removeCandidate(c);
    for (const f of msg.feed || []) feed(f, !msg.reset);
    if (msg.renewals) renewals(msg.renewals);
    updateCounts();
    emptyStates();
    if ((msg.feed || []).length || (msg.gone || []).length) historyChanged();
  }

  /** Tells the time control (scrub.js) that the history may have a new event. */
  function historyChanged() { document.dispatchEvent(new CustomEvent('ll:history')); }

  // --- the feed -----------------------------------------------------------------------------
  let renewalCount = 0;
  const renewalEl = document.getElementById('renewal-count');
  function renewals(n) {
    renewalCount += n;
    renewalEl.textContent = String(renewalCount);
    LL.setText(renewalEl.parentElement, 'renewal-words', LL.t(renewalCount === 1 ? 'dash.renewal1' : 'dash.renewals'));
  }

  /** Adds a feed line on top: f as the server told it ({atMs, at, kind, icon, text, namespace, lease}). */
  function feed(f, fresh) {
    const li = LL.fromTemplate('feed-item-template');
    li.className = 'feed-item feed-' + f.kind + (fresh ? ' fresh' : '');
    li.dataset.kind = f.kind;
    li.dataset.namespace = f.namespace;
    li.dataset.lease = f.lease;
    li.querySelector('use').setAttribute('href', '#i-' + (f.icon || f.kind));
    LL.setText(li, 'at', f.at || LL.clock(f.atMs));
    LL.setText(li, 'text', f.text);
    li.hidden = !!nsFilter && f.namespace !== nsFilter;
    feedList.insertBefore(li, feedList.firstChild);
    while (feedList.children.length > 60) feedList.lastElementChild.remove();
  }

  // --- namespaces ---------------------------------------------------------------------------
  function onNamespace(type, o) {
    const name = (o.metadata || {}).name;
    if (!name) return;
    const existing = Array.from(filter.options).find((op) => op.value === name);
    if (type === 'DELETED') {
      if (existing && existing.value !== nsFilter) existing.remove();
      return;
    }
    if (existing) return;
    const opt = document.createElement('option');
    opt.value = name;
    opt.textContent = name;
    let before = null;
    for (const op of filter.options) if (op.value && op.value > name) { before = op; break; }
    filter.insertBefore(opt, before);
  }

  /** Hides what the namespace filter leaves out. */
  function hideFiltered() {
    for (const el of root.querySelectorAll('[data-lease-card], [data-tab-row], [data-candidate-row], [data-election-row], .feed-item')) {
      el.hidden = !!nsFilter && el.dataset.namespace !== nsFilter;
    }
    emptyStates();
  }

  /** Shows the namespace the filter names; push makes it a step Back returns from. */
  function applyFilter(push) {
    const changed = nsFilter !== filter.value;
    nsFilter = filter.value;
    hideFiltered();
    if (changed && board) { send.reopen(); board.reopen(); }
    openTabNS.value = LL.writeNamespace(nsFilter);
    document.getElementById('open-tab-ns-label').textContent = openTabNS.value + '/';
    if (document.activeElement !== newLeaseNS) newLeaseNS.value = LL.writeNamespace(nsFilter);
    download.setAttribute('href', nsFilter ? '/ui/history?namespace=' + enc(nsFilter) : '/ui/history');
    const u = new URL(location.href);
    if (nsFilter) u.searchParams.set('namespace', nsFilter); else u.searchParams.delete('namespace');
    if (push === true) history.pushState(null, '', u.href); else history.replaceState(null, '', u.href);
  }
  filter.addEventListener('change', () => applyFilter());
  // A form leads back to the namespace shown: the server reads it from the form's view field.
  document.addEventListener('submit', (e) => {
    const form = e.target;
    if (!(form instanceof HTMLFormElement) || form.method !== 'post') return;
    let view = form.querySelector('input[name=view]');
    if (!view) {
      view = document.createElement('input');
      view.type = 'hidden';
      view.name = 'view';
      form.append(view);
    }
    view.value = nsFilter;
  }, true);
  // Back from a namespace the room's name showed: the filter follows the address.
  window.addEventListener('popstate', () => {
    const ns = new URL(location.href).searchParams.get('namespace') || '';
    if (ns !== filter.value && Array.from(filter.options).some((o) => o.value === ns)) {
      filter.value = ns;
      applyFilter();
    }
  });
  // The time control swapped in the dashboard of a moment.
  root.addEventListener('ll:swapped', hideFiltered);

  // --- LeaseCandidates ----------------------------------------------------------------------
  const candidates = new Map();
  for (const row of candBody.querySelectorAll('[data-candidate-row]')) {
    candidates.set(key(row.dataset.namespace, row.dataset.name), row);
  }
  /** Draws a LeaseCandidate row as the server pushed it. */
  function drawCandidate(c) {
    const k = key(c.namespace, c.name);
    let row = candidates.get(k);
    if (!row) {
      row = LL.fromTemplate('candidate-row-template');
      row.dataset.namespace = c.namespace;
      row.dataset.name = c.name;
      let before = null;
      for (const r of candBody.querySelectorAll('[data-candidate-row]')) {
        if (key(r.dataset.namespace, r.dataset.name) > k) { before = r; break; }
      }
      candBody.insertBefore(row, before);
      candidates.set(k, row);
    }
    row.dataset.lease = c.leaseName;
    LL.setText(row, 'name', k);
    const a = LL.field(row, 'lease');
    a.textContent = c.leaseName;
    a.setAttribute('href', '/leases/' + enc(c.namespace) + '/' + enc(c.leaseName));
    LL.setText(row, 'binary', c.binaryVersion);
    LL.setText(row, 'emulation', c.emulationVersion);
    setWords(LL.field(row, 'strategy'), c.strategies);
    LL.field(row, 'v1alpha1').hidden = !c.v1alpha1;
    LL.setText(row, 'ping', c.pingTime);
    LL.setText(row, 'renew', c.renewTime);
    row.hidden = !!nsFilter && row.dataset.namespace !== nsFilter;
  }
  function removeCandidate(c) {
    const k = key(c.namespace, c.name);
    const row = candidates.get(k);
    if (row) { row.remove(); candidates.delete(k); }
  }

  // --- elections: the controller's latest decision per lease with candidates ----------------
  /** The latest decision per lease, as the server pushes it: {kind, candidate, message, atMs}. */
  const decisions = new Map();
  let election = electPanel.dataset.election === 'true';
  const electionRows = new Map();
  for (const row of electBody.querySelectorAll('[data-election-row]')) {
    const k = key(row.dataset.namespace, row.dataset.lease);
    electionRows.set(k, row);
    if (row.dataset.kind) {
      decisions.set(k, {
        kind: row.dataset.kind, candidate: row.dataset.candidate || '',
        icon: row.dataset.icon || 'free', word: LL.field(row, 'kind-word').textContent.trim(),
        message: LL.field(row, 'message').textContent.trim(), atMs: Number(row.dataset.at) || 0,
      });
    }
  }

  function onDecisions(msg) {
    if (election !== !!msg.election) {
      // The controller started (or stopped) since the page was rendered: rows without a
      // decision say so.
      election = !!msg.election;
      electPanel.dataset.election = election ? 'true' : 'false';
      for (const [k, row] of electionRows) renderElection(row, k);
    }
    for (const d of msg.decisions || []) {
      const k = key(d.namespace || '', d.lease || '');
      if (d.kind) decisions.set(k, d); else decisions.delete(k);
      const row = electionRows.get(k);
      if (row) renderElection(row, k);
      const card = leases.get(k);
      if (card) showCardConflict(card);
    }
  }

  /** The latest decision about a lease when it is a strategy conflict and candidates still name it. */
  function conflictOf(k) {
    const d = decisions.get(k);
    return d && d.kind === 'conflict' && electionRows.has(k) ? d : null;
  }

  function showCardConflict(card) {
    const d = conflictOf(key(card.dataset.namespace, card.dataset.name));
    LL.field(card, 'conflict').hidden = !d;
    LL.setText(card, 'conflict-text', d ? d.message || '' : '');
  }

  function renderElection(row, k) {
    const d = decisions.get(k);
    const kind = d ? d.kind : '';
    row.className = 'election-row decision-' + kind + (kind === 'conflict' ? ' decision-warning' : '');
    row.dataset.kind = kind;
    row.dataset.candidate = d ? d.candidate || '' : '';
    row.dataset.at = String(d ? d.atMs || 0 : 0);
    const badge = LL.field(row, 'kind');
    badge.hidden = !d;
    badge.querySelector('use').setAttribute('href', '#i-' + (d ? d.icon : 'free'));
    LL.setText(row, 'kind-word', d ? decisionWord(d) : LL.t('dash.decisionNone'));
    LL.setText(row, 'message', d ? d.message || '' : LL.t(election ? 'dash.noDecision' : 'dash.controllerOff'));
    const age = LL.field(row, 'age');
    age.textContent = d ? LL.ago(d.atMs) : '';
    age.setAttribute('title', d ? LL.clock(d.atMs) : '');
  }

  /** How a decision's kind reads in its badge, in the page's language. */
  function decisionWord(d) { return LL.has('decision.' + d.kind) ? LL.t('decision.' + d.kind) : d.word; }

  /** Keeps one row per lease that has candidates, sorted by namespace and name, with its count. */
  function syncElections(nCands) {
    for (const [k, row] of electionRows) {
      if (!nCands.has(k)) { row.remove(); electionRows.delete(k); }
    }
    for (const [k, n] of nCands) {
      let row = electionRows.get(k);
      if (!row) {
        const i = k.indexOf('/');
        const ns = k.slice(0, i);
        const name = k.slice(i + 1);
        row = LL.fromTemplate('election-row-template');
        row.dataset.namespace = ns;
        row.dataset.lease = name;
        const a = LL.field(row, 'lease');
        a.textContent = k;
        a.setAttribute('href', '/leases/' + enc(ns) + '/' + enc(name));
        let before = null;
        for (const r of electBody.querySelectorAll('[data-election-row]')) {
          if (key(r.dataset.namespace, r.dataset.lease) > k) { before = r; break; }
        }
        electBody.insertBefore(row, before);
        electionRows.set(k, row);
        renderElection(row, k);
      }
      LL.setText(row, 'candidates', String(n));
      row.hidden = !!nsFilter && row.dataset.namespace !== nsFilter;
    }
    for (const card of leases.values()) showCardConflict(card);
  }

  // Ages move on without any message.
  setInterval(() => {
    if (document.hidden) return;
    for (const [k, row] of electionRows) {
      const d = decisions.get(k);
      if (d) LL.setText(row, 'age', LL.ago(d.atMs));
    }
  }, 1000);

  // --- connected candidate tabs -------------------------------------------------------------
  let tabs = [];
  const lastLogSeen = new Map();
  // The hub sends the whole list first, then what changed ("tabsChanged"); the list is kept
  // here by id and drawn in the hub's order: namespace, lease, connection time, id.
  const tabsById = new Map();
  function tabOrder(a, b) {
    const s = (x, y) => (x < y ? -1 : x > y ? 1 : 0);
    return s(a.namespace, b.namespace) || s(a.lease, b.lease) || (a.connectedAt - b.connectedAt) || s(a.id, b.id);
  }
  function onTabs(msg) {
    if (msg.type === 'tabs') tabsById.clear();
    let roles = (msg.gone || []).length > 0;
    for (const t of msg.tabs || []) {
      const was = tabsById.get(t.id);
      if (!was || was.state !== t.state) roles = true; // a candidate's role changed: an event
      tabsById.set(t.id, t);
    }
    for (const id of msg.gone || []) tabsById.delete(id);
    renderTabs(Array.from(tabsById.values()).sort(tabOrder));
    if (roles && msg.type !== 'tabs') historyChanged();
  }

  function renderTabs(list) {
    const rows = new Map();
    for (const row of tabsList.querySelectorAll('[data-tab-row]')) rows.set(row.dataset.tabId, row);
    const keep = new Set();
    let prevRow = null;
    for (const t of list) {
      keep.add(t.id);
      let row = rows.get(t.id);
      if (!row) {
        row = LL.fromTemplate('tab-row-template');
        row.dataset.tabId = t.id;
      }
      // Keep the hub's order.
      const want = prevRow ? prevRow.nextSibling : tabsList.firstChild;
      if (row !== want) tabsList.insertBefore(row, want);
      prevRow = row;
      row.dataset.namespace = t.namespace;
      row.dataset.lease = t.lease;
      row.dataset.identity = t.identity;
      row.dataset.owner = t.owner || '';
      row.dataset.commandable = String(LL.mayCommand(t.owner || ''));
      row.dataset.state = t.state;
      // A stale leader (the hub decides it from the report) is told as the tab tells it.
      row.dataset.stale = t.stale ? 'true' : 'false';
      row.className = 'tabrow tab-' + t.state + (t.stale ? ' stale' : '');
      LL.showState(row.querySelector('.state'), t.stale ? 'stale' : t.state);
      LL.setText(row, 'identity', t.identity);
      LL.setText(row, 'lease', t.namespace + '/' + t.lease + (t.owner ? LL.t('dash.openedBy', t.owner) : ''));
      LL.setText(row, 'faults', faultsText(t));
      LL.setText(row, 'log', logText(t.lastLog));
      showMode(row, t);
      LL.showFaults(row, t.faults, row);
      LL.showActionable(row, t.state);
      const delay = LL.field(row, 'delay');
      if (delay && t.faults && t.faults.latencyMs > 0 && document.activeElement !== delay &&
          Array.from(delay.options).some((o) => o.value === String(t.faults.latencyMs))) delay.value = String(t.faults.latencyMs);
      LL.field(row, 'faultbar').hidden = !!t.native;
      LL.field(row, 'native').hidden = !t.native;
      row.hidden = !!nsFilter && t.namespace !== nsFilter;
      const log = t.lastLog || {};
      if (log.kind === 'conflict' && lastLogSeen.has(t.id) && lastLogSeen.get(t.id) !== log.at) {
        feed({ kind: 'conflict', icon: 'conflict', atMs: LL.serverNow(), text: t.identity + ': ' + logText(log), namespace: t.namespace, lease: t.lease }, true);
      }
      lastLogSeen.set(t.id, log.at);
    }
    for (const [id, row] of rows) if (!keep.has(id)) { row.remove(); lastLogSeen.delete(id); }
    tabs = list;
    document.getElementById('tab-count').textContent = String(list.length);
    renderRoom(list);
    updateCounts();
    emptyStates();
  }

  /** Draws the room again once, soon: a card's split brains changed. */
  let roomPending = false;
  function roomSoon() {
    if (!room || roomPending) return;
    roomPending = true;
    requestAnimationFrame(() => { roomPending = false; renderRoom(tabs); });
  }

  // The instructor's room (workshop mode): one line per participant with tabs open, drawn from
  // the tab list while the dashboard shows every namespace; a name shows that participant's.
  function renderRoom(list) {
    if (!room) return;
    room.hidden = !!nsFilter;
    if (nsFilter) return; // the list is one namespace's: the room is drawn again with all
    const byOwner = new Map();
    for (const t of list) {
      if (!t.owner) continue;
      if (!byOwner.has(t.owner)) byOwner.set(t.owner, []);
      byOwner.get(t.owner).push(t);
    }
    const ul = document.getElementById('room-list');
    ul.replaceChildren();
    for (const owner of Array.from(byOwner.keys()).sort()) {
      const ts = byOwner.get(owner);
      const count = (f) => ts.filter(f).length;
      const leading = count((t) => t.state === 'leader' && !t.stale);
      const stale = count((t) => t.stale);
      // Split brains on the leases of their tabs, as the cards count them.
      let splits = 0;
      for (const k of new Set(ts.map((t) => key(t.namespace, t.lease)))) {
        const card = leases.get(k);
        if (card) splits += Number(card.dataset.overlaps || 0);
      }
      const facts = [ts.length === 1 ? LL.t('dash.roomTab1') : LL.t('dash.roomTabs', ts.length),
        leading ? LL.t('dash.roomLeading', leading) : LL.t('dash.roomNoLeader')];
      for (const [n, msgKey] of [[count((t) => t.faults && t.faults.paused), 'dash.roomPaused'],
        [count((t) => t.faults && t.faults.partition), 'dash.roomPartitioned'],
        [count((t) => t.state === 'stopped'), 'dash.roomStopped']]) if (n) facts.push(LL.t(msgKey, n));
      // The participant's namespace: where their tabs run, the arena only when nowhere else.
      const own = ts.map((t) => t.namespace).find((ns) => ns !== 'arena') || ts[0].namespace;
      const li = document.createElement('li');
      li.className = 'room-row' + (stale || splits ? ' stale' : '') + (leading ? '' : ' leaderless');
      li.dataset.testid = 'room-row';
      li.dataset.owner = owner;
      li.dataset.tabs = String(ts.length);
      li.dataset.leading = String(leading);
      li.dataset.stale = String(stale);
      li.dataset.splitBrains = String(splits);
      const name = document.createElement('button');
      name.type = 'button';
      name.className = 'room-name';
      name.dataset.namespace = own;
      name.textContent = owner;
      const text = document.createElement('span');
      text.className = 'room-facts';
      text.textContent = facts.join(' · ');
      li.append(name, text);
      for (const [n, words] of [[stale, LL.t('dash.roomStale', stale)],
        [splits, splits === 1 ? LL.t('dash.splitBrain1') : LL.t('dash.splitBrains', splits)]]) {
        if (!n) continue;
        const badge = document.createElement('span');
        badge.className = 'badge room-stale';
        badge.textContent = words;
        li.append(badge);
      }
      ul.append(li);
    }
    document.getElementById('room-count').textContent = String(byOwner.size);
    document.getElementById('room-empty').hidden = byOwner.size > 0;
  }
  if (room) {
    // Folded, the room stays folded across reloads of this browser.
    try { if (localStorage.getItem('leaselab.room') === 'folded') room.open = false; } catch (_) { /* no storage */ }
    room.addEventListener('toggle', () => {
      try { localStorage.setItem('leaselab.room', room.open ? 'open' : 'folded'); } catch (_) { /* no storage */ }
    });
    room.addEventListener('click', (e) => {
      const b = e.target.closest('.room-name');
      if (!b) return;
      if (!Array.from(filter.options).some((o) => o.value === b.dataset.namespace)) filter.add(new Option(b.dataset.namespace, b.dataset.namespace));
      filter.value = b.dataset.namespace;
      applyFilter(true);
    });
  }

  /** A tab's faults in words: the server words them in the page's language (activeFaults). */
  function faultsText(t) {
    if (!t.activeFaults || !t.activeFaults.length) return LL.t('dash.noFaults');
    return LL.list(t.activeFaults);
  }

  /** A tab's newest decision in the page's language. */
  function logText(log) { return log ? LL.msg(log.msg, log.text || '') : ''; }

  /** Shows how a tab elects, as it reported: plain, or coordinated with its versions and strategy. */
  function showMode(row, t) {
    const coordinated = !!t.coordinated;
    LL.field(row, 'mode').dataset.mode = coordinated ? 'coordinated' : 'plain';
    LL.field(row, 'mode-plain').hidden = coordinated;
    LL.field(row, 'mode-coordinated').hidden = !coordinated;
    LL.field(row, 'versions').hidden = !coordinated;
    LL.setText(row, 'binary', coordinated ? t.binaryVersion || '' : '');
    LL.setText(row, 'emulation', coordinated ? t.emulationVersion || '' : '');
    LL.setText(row, 'strategy', coordinated ? t.strategy || '' : '');
    LL.field(row, 'stepdown').hidden = !t.steppingDown;
    LL.setText(row, 'preferred', t.steppingDown ? t.preferredHolder || '' : '');
  }

  tabsList.addEventListener('click', (e) => {
    const b = e.target.closest('[data-cmd]');
    if (!b) return;
    const row = b.closest('[data-tab-row]');
    const t = tabs.find((x) => x.id === row.dataset.tabId);
    if (!t) return;
    const cmd = LL.faultCommand(b.dataset.cmd, t.faults, { delayMs: chosenDelay(row) });
    if (cmd && !send({ type: 'command', tab: t.id, command: cmd })) flashTab(t.id, LL.t('js.notConnected'));
  });
  // A new delay for a tab whose network is slow already applies at once; "auto" (no delay
  // named) lets the tab choose by its own timings.
  tabsList.addEventListener('change', (e) => {
    const sel = e.target.closest('[data-field="delay"]');
    if (!sel) return;
    const row = sel.closest('[data-tab-row]');
    const t = tabs.find((x) => x.id === row.dataset.tabId);
    if (!t || !(t.faults && t.faults.latencyMs > 0)) return;
    const ms = chosenDelay(row);
    const cmd = ms ? { type: 'slow', latencyMs: ms } : { type: 'slow' };
    if (!send({ type: 'command', tab: t.id, command: cmd })) flashTab(t.id, LL.t('js.notConnected'));
  });
  /** The delay chosen on a tab row, in ms; 0 for "auto". */
  function chosenDelay(row) {
    const sel = LL.field(row, 'delay');
    return sel ? Number(sel.value) || 0 : 0;
  }

  function flashTab(id, text) {
    const row = tabsList.querySelector('[data-tab-id="' + CSS.escape(id || '') + '"]');
    if (row) LL.setText(row, 'log', LL.t('js.commandFailed', text));
  }

  // --- counts and empty states --------------------------------------------------------------
  function updateCounts() {
    const nCands = new Map();
    for (const row of candidates.values()) {
      const k = key(row.dataset.namespace, row.dataset.lease);
      nCands.set(k, (nCands.get(k) || 0) + 1);
    }
    const nTabs = new Map();
    const cast = new Map();
    for (const t of tabs) {
      const k = key(t.namespace, t.lease);
      nTabs.set(k, (nTabs.get(k) || 0) + 1);
      if (!cast.has(k)) cast.set(k, []);
      // The stage's word for the tab's role (templates.CastRole): a leader whose record
      // names another is stale; otherwise its state.
      cast.get(k).push({ identity: t.identity, role: t.stale && t.state === 'leader' ? 'stale' : t.state });
    }
    for (const [k, card] of leases) {
      LL.setText(card, 'candidates', String(nCands.get(k) || 0));
      LL.setText(card, 'tabs', String(nTabs.get(k) || 0));
      drawCast(LL.field(card, 'cast'), cast.get(k) || []);
    }
    syncElections(nCands);
  }

  /** Fills a card's cast: one chip per candidate, its role as an icon, its name and a word. */
  function drawCast(list, members) {
    if (!list) return;
    const was = Array.from(list.children, (li) => li.dataset.identity + '=' + li.dataset.role).join(' ');
    if (was === members.map((m) => m.identity + '=' + m.role).join(' ')) return;
    list.replaceChildren(...members.map((m) => {
      const li = LL.fromTemplate('cast-chip-template');
      li.dataset.identity = m.identity;
      li.dataset.role = m.role;
      li.className = 'cast cast-' + m.role;
      li.querySelector('use').setAttribute('href', '#i-' + (m.role === 'stale' ? 'conflict' : m.role));
      li.querySelector('b').textContent = m.identity;
      li.querySelector('span').textContent = LL.t('stage.role.' + m.role);
      return li;
    }));
  }

  function emptyStates() {
    const visible = (sel) => Array.from(root.querySelectorAll(sel)).some((el) => !el.hidden);
    document.getElementById('no-leases').hidden = visible('#lease-grid [data-lease-card]');
    document.getElementById('no-tabs').hidden = visible('#tabs [data-tab-row]');
    document.getElementById('no-candidates').hidden = visible('#candidates [data-candidate-row]');
    document.getElementById('no-elections').hidden = visible('#elections [data-election-row]');
  }

  // --- streams ------------------------------------------------------------------------------
  /** Sends a fault command to the hub; false while not connected. */
  let send = () => false;
  let board = null;
  function follow() {
    send = LL.socket('tabs', () => '/ui/tabs/watch?changes=1' + (nsFilter ? '&namespace=' + enc(nsFilter) : ''), (msg) => {
      if (msg.type === 'tabs' || msg.type === 'tabsChanged') onTabs(msg);
      if (msg.type === 'decisions') onDecisions(msg);
      if (msg.type === 'error') flashTab(msg.tab, msg.error);
    });
    // The tabs and the board of the namespace shown (all when none is): the server sends a
    // participant's dashboard its own namespace's, not every other tab's reports and lease's
    // renewals; a new filter connects again and gets its namespace's whole list and board.
    board = LL.socket('board', () => '/ui/board/watch' + (nsFilter ? '?namespace=' + enc(nsFilter) : ''),
      (msg) => { if (msg.type === 'board') onBoard(msg); });
    LL.watch('namespaces', '/api/v1/namespaces', root.dataset.namespacesRv, onNamespace, () => location.reload());
  }
  if (!root.dataset.at) follow();
  emptyStates();
})();
