// dashboard.js: keeps the server-rendered dashboard current. Leases, namespaces and
// LeaseCandidates come from the API's watch streams (WebSocket), the connected candidate tabs
// and the election controller's latest decisions from the tab hub's stream, which also carries
// the instructor's fault commands to a tab.
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
  const leaseNames = document.getElementById('lease-names');
  let nsFilter = filter.value;

  const key = (ns, name) => ns + '/' + name;
  const enc = encodeURIComponent;

  // --- leases -------------------------------------------------------------------------------
  /** What the dashboard remembers of each lease: enough to tell what a change did. */
  const leases = new Map();
  for (const card of grid.querySelectorAll('[data-lease-card]')) {
    const d = card.dataset;
    leases.set(key(d.namespace, d.name), {
      holder: d.holder, since: Number(d.since) || 0, duration: Number(d.duration) || 0,
      transitions: Number(d.transitions) || 0, card,
    });
  }

  /**
   * When a lease's hold counts from: spec.renewTime, else spec.acquireTime, else the time of
   * the change that wrote it (changedAt). The server's holdSince (web/ui/timeline.go) is the
   * same rule, so that cards, the feed and the timeline agree on when a lease expires.
   */
  function holdSince(s, changedAt) {
    const t = Date.parse(s.renewTime || s.acquireTime || '');
    return Number.isNaN(t) ? changedAt : t;
  }

  /** A lease as the dashboard keeps it; changedAt is when the change arrived (server clock). */
  function specOf(o, changedAt) {
    const s = o.spec || {};
    return {
      holder: s.holderIdentity || '',
      since: holdSince(s, changedAt),
      duration: s.leaseDurationSeconds || 0,
      transitions: s.leaseTransitions || 0,
      strategy: s.strategy || '',
    };
  }

  function expiresOf(st) { return st.since && st.duration ? st.since + st.duration * 1000 : 0; }

  function statusOf(st) {
    if (!st.holder) return 'free';
    const exp = expiresOf(st);
    if (exp && LL.serverNow() >= exp) return 'expired';
    return 'held';
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
    LL.setText(card, 'namespace', ns);
    LL.setText(card, 'name', name);
    LL.field(card, 'link').setAttribute('href', '/leases/' + enc(ns) + '/' + enc(name));
    LL.field(card, 'play').setAttribute('href', '/play?namespace=' + enc(ns) + '&lease=' + enc(name));
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

  function renderCard(card, st) {
    card.dataset.holder = st.holder;
    card.dataset.since = String(st.since);
    card.dataset.duration = String(st.duration);
    card.dataset.transitions = String(st.transitions);
    const h = LL.field(card, 'holder');
    h.textContent = st.holder || 'no holder';
    h.classList.toggle('holder-empty', !st.holder);
    LL.setText(card, 'transitions', String(st.transitions));
    const cle = LL.field(card, 'cle');
    cle.hidden = !st.strategy;
    cle.setAttribute('title', 'Coordinated Leader Election: strategy ' + st.strategy);
    const ring = card.querySelector('[data-ring]');
    ring.dataset.expires = String(expiresOf(st));
    ring.dataset.duration = String(st.duration);
    delete ring.dataset.firedFor;
    setStatus(card, statusOf(st));
    showCardConflict(card);
    card.hidden = !!nsFilter && card.dataset.namespace !== nsFilter;
  }

  function onLease(type, o) {
    const m = o.metadata || {};
    const ns = m.namespace || '';
    const name = m.name || '';
    const k = key(ns, name);
    const prev = leases.get(k);
    if (type === 'DELETED') {
      if (prev) {
        prev.card.remove();
        leases.delete(k);
        for (const opt of leaseNames.querySelectorAll('option')) if (opt.value === name) { opt.remove(); break; }
        feed('deleted', k + ' was deleted', ns, name);
      }
      emptyStates();
      return;
    }
    // A live change arrives within milliseconds of its commit: its arrival stands in for the
    // commit time when the lease has neither renewTime nor acquireTime.
    const st = specOf(o, LL.serverNow());
    const card = prev ? prev.card : newCard(ns, name);
    if (!prev) {
      feed(st.holder ? 'acquired' : 'created', st.holder ? st.holder + ' created and acquired ' + k : k + ' was created', ns, name);
    } else {
      tellChange(k, prev, st, ns, name);
    }
    st.card = card;
    leases.set(k, st);
    renderCard(card, st);
    updateCounts();
    emptyStates();
  }

  /** Tells in the feed what a change did: renewals are counted, the rest get a line. */
  function tellChange(k, prev, st, ns, name) {
    if (prev.holder === st.holder) {
      if (!st.holder || st.since === prev.since) return;
      const exp = expiresOf(prev);
      if (exp && exp <= LL.serverNow()) {
        feed('acquired', st.holder + ' wrote ' + k + ' again after its hold had expired (transitions ' + st.transitions + ')', ns, name);
      } else {
        renewals(1);
      }
      return;
    }
    if (!st.holder) {
      feed('released', prev.holder + ' released ' + k, ns, name);
    } else if (!prev.holder) {
      feed('acquired', st.holder + ' acquired ' + k + ' (transitions ' + st.transitions + ')', ns, name);
    } else {
      const exp = expiresOf(prev);
      if (exp && exp <= LL.serverNow()) {
        feed('acquired', st.holder + ' acquired ' + k + ' after ' + prev.holder + "'s hold expired (transitions " + st.transitions + ')', ns, name);
      } else {
        feed('takeover', st.holder + ' took ' + k + ' over from ' + prev.holder + ' (transitions ' + st.transitions + ')', ns, name);
      }
    }
  }

  // A ring that drains to zero: the holder did not renew in time.
  // While the server is out of reach the dashboard cannot know whether the holder renewed:
  // nothing is told then. Rings that ran out meanwhile are told once the streams are back and
  // have caught up, if no change arrived for them.
  const unsure = new Map();
  grid.addEventListener('ll:expired', (e) => {
    const card = e.target.closest('[data-lease-card]');
    if (!card) return;
    const k = key(card.dataset.namespace, card.dataset.name);
    const st = leases.get(k);
    if (!st || !st.holder) return;
    if (!LL.connected()) { unsure.set(k, st); return; }
    tellExpired(k, st);
  });
  function tellExpired(k, st) {
    setStatus(st.card, 'expired');
    feed('expired', st.holder + "'s hold on " + k + ' expired: not renewed in time', st.card.dataset.namespace, st.card.dataset.name);
  }
  LL.onConnection((up) => {
    if (!up) return;
    setTimeout(() => {
      if (!LL.connected()) return;
      for (const [k, st] of unsure) if (leases.get(k) === st && statusOf(st) === 'expired') tellExpired(k, st);
      unsure.clear();
    }, 1500);
  });

  // --- the feed -----------------------------------------------------------------------------
  let renewalCount = 0;
  const renewalEl = document.getElementById('renewal-count');
  function renewals(n) {
    renewalCount += n;
    renewalEl.textContent = String(renewalCount);
  }

  function feed(kind, text, ns, name) {
    const li = LL.fromTemplate('feed-item-template');
    li.className = 'feed-item feed-' + kind + ' fresh';
    li.dataset.kind = kind;
    li.dataset.namespace = ns;
    li.dataset.lease = name;
    li.querySelector('use').setAttribute('href', '#i-' + kind);
    LL.setText(li, 'at', LL.clock(LL.serverNow()));
    LL.setText(li, 'text', text);
    li.hidden = !!nsFilter && ns !== nsFilter;
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

  function applyFilter() {
    nsFilter = filter.value;
    for (const el of root.querySelectorAll('[data-lease-card], [data-tab-row], [data-candidate-row], [data-election-row], .feed-item')) {
      el.hidden = !!nsFilter && el.dataset.namespace !== nsFilter;
    }
    openTabNS.value = nsFilter || 'default';
    const u = new URL(location.href);
    if (nsFilter) u.searchParams.set('namespace', nsFilter); else u.searchParams.delete('namespace');
    history.replaceState(null, '', u.href);
    emptyStates();
  }
  filter.addEventListener('change', applyFilter);

  // --- LeaseCandidates ----------------------------------------------------------------------
  const candidates = new Map();
  for (const row of candBody.querySelectorAll('[data-candidate-row]')) {
    candidates.set(key(row.dataset.namespace, row.dataset.name), row);
  }
  function onCandidate(type, o) {
    const m = o.metadata || {};
    const s = o.spec || {};
    const k = key(m.namespace || '', m.name || '');
    let row = candidates.get(k);
    if (type === 'DELETED') {
      if (row) { row.remove(); candidates.delete(k); }
      updateCounts();
      emptyStates();
      return;
    }
    if (!row) {
      row = LL.fromTemplate('candidate-row-template');
      row.dataset.namespace = m.namespace || '';
      row.dataset.name = m.name || '';
      candBody.appendChild(row);
      candidates.set(k, row);
    }
    row.dataset.lease = s.leaseName || '';
    LL.setText(row, 'name', k);
    const a = LL.field(row, 'lease');
    a.textContent = s.leaseName || '';
    a.setAttribute('href', '/leases/' + enc(m.namespace || '') + '/' + enc(s.leaseName || ''));
    LL.setText(row, 'binary', s.binaryVersion || '');
    LL.setText(row, 'emulation', s.emulationVersion || '');
    const strat = strategiesOf(o);
    LL.setText(row, 'strategy', strat.text);
    LL.field(row, 'v1alpha1').hidden = !strat.alpha;
    LL.setText(row, 'ping', s.pingTime ? LL.clock(Date.parse(s.pingTime)) : '');
    LL.setText(row, 'renew', s.renewTime ? LL.clock(Date.parse(s.renewTime)) : '');
    row.hidden = !!nsFilter && row.dataset.namespace !== nsFilter;
    updateCounts();
    emptyStates();
  }

  /**
   * A candidate's strategies as the server shows them: for one written through v1alpha1 (the
   * annotation holds its whole preferredStrategies list while the list's first entry is
   * spec.strategy) the list in order, otherwise its one strategy.
   */
  function strategiesOf(o) {
    const s = o.spec || {};
    const ann = (o.metadata || {}).annotations || {};
    const raw = ann['leaselab.dev/v1alpha1-preferred-strategies'];
    if (typeof raw === 'string') {
      let list;
      try { list = JSON.parse(raw); } catch (e) { list = undefined; }
      if (list === null) list = [];
      if (Array.isArray(list) && list.every((x) => typeof x === 'string') && (list.length ? list[0] : '') === (s.strategy || '')) {
        return { text: list.length ? list.join(' > ') : '(none)', alpha: true };
      }
    }
    return { text: s.strategy || '', alpha: false };
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
      const st = leases.get(k);
      if (st) showCardConflict(st.card);
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

  function ageText(atMs) {
    if (!atMs) return '';
    const s = Math.floor((LL.serverNow() - atMs) / 1000);
    if (s < 0) return 'in the future';
    if (s < 60) return s + ' s ago';
    if (s < 3600) return Math.floor(s / 60) + ' min ago';
    if (s < 48 * 3600) return Math.floor(s / 3600) + ' h ago';
    return Math.floor(s / 86400) + ' days ago';
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
    LL.setText(row, 'kind-word', d ? d.word : 'NONE');
    LL.setText(row, 'message', d ? d.message || '' : (election ? 'no decision yet' : 'the election controller is off'));
    const age = LL.field(row, 'age');
    age.textContent = d ? ageText(d.atMs) : '';
    age.setAttribute('title', d ? LL.clock(d.atMs) : '');
  }

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
    for (const st of leases.values()) showCardConflict(st.card);
  }

  // Ages move on without any message.
  setInterval(() => {
    if (document.hidden) return;
    for (const [k, row] of electionRows) {
      const d = decisions.get(k);
      if (d) LL.setText(row, 'age', ageText(d.atMs));
    }
  }, 1000);

  // --- connected candidate tabs -------------------------------------------------------------
  let tabs = [];
  const lastLogSeen = new Map();
  const send = LL.socket('tabs', '/ui/tabs/watch', (msg) => {
    if (msg.type === 'tabs') renderTabs(msg.tabs || []);
    if (msg.type === 'decisions') onDecisions(msg);
    if (msg.type === 'error') flashTab(msg.tab, msg.error);
  });

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
      row.dataset.state = t.state;
      row.className = 'tabrow tab-' + t.state;
      LL.showState(row.querySelector('.state'), t.state);
      LL.setText(row, 'identity', t.identity);
      LL.setText(row, 'lease', t.namespace + '/' + t.lease + (t.owner ? ' · opened by ' + t.owner : ''));
      LL.setText(row, 'faults', t.activeFaults && t.activeFaults.length ? t.activeFaults.join(', ') : 'no faults');
      LL.setText(row, 'log', (t.lastLog && t.lastLog.text) || '');
      showMode(row, t);
      LL.showFaults(row, t.faults);
      row.hidden = !!nsFilter && t.namespace !== nsFilter;
      const log = t.lastLog || {};
      if (log.kind === 'conflict' && lastLogSeen.has(t.id) && lastLogSeen.get(t.id) !== log.at) {
        feed('conflict', t.identity + ': ' + log.text, t.namespace, t.lease);
      }
      lastLogSeen.set(t.id, log.at);
    }
    for (const [id, row] of rows) if (!keep.has(id)) { row.remove(); lastLogSeen.delete(id); }
    tabs = list;
    document.getElementById('tab-count').textContent = String(list.length);
    updateCounts();
    emptyStates();
  }

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
    const cmd = LL.faultCommand(b.dataset.cmd, t.faults);
    if (cmd && !send({ type: 'command', tab: t.id, command: cmd })) flashTab(t.id, 'not connected to the server');
  });

  function flashTab(id, text) {
    const row = tabsList.querySelector('[data-tab-id="' + CSS.escape(id || '') + '"]');
    if (row) LL.setText(row, 'log', 'command failed: ' + text);
  }

  // --- counts and empty states --------------------------------------------------------------
  function updateCounts() {
    const nCands = new Map();
    for (const row of candidates.values()) {
      const k = key(row.dataset.namespace, row.dataset.lease);
      nCands.set(k, (nCands.get(k) || 0) + 1);
    }
    const nTabs = new Map();
    for (const t of tabs) {
      const k = key(t.namespace, t.lease);
      nTabs.set(k, (nTabs.get(k) || 0) + 1);
    }
    for (const [k, st] of leases) {
      LL.setText(st.card, 'candidates', String(nCands.get(k) || 0));
      LL.setText(st.card, 'tabs', String(nTabs.get(k) || 0));
    }
    syncElections(nCands);
  }

  function emptyStates() {
    const visible = (sel) => Array.from(root.querySelectorAll(sel)).some((el) => !el.hidden);
    document.getElementById('no-leases').hidden = visible('#lease-grid [data-lease-card]');
    document.getElementById('no-tabs').hidden = visible('#tabs [data-tab-row]');
    document.getElementById('no-candidates').hidden = visible('#candidates [data-candidate-row]');
    document.getElementById('no-elections').hidden = visible('#elections [data-election-row]');
  }

  // --- streams ------------------------------------------------------------------------------
  const reload = () => location.reload();
  LL.watch('leases', '/apis/coordination.k8s.io/v1/leases', root.dataset.leasesRv, onLease, reload);
  LL.watch('namespaces', '/api/v1/namespaces', root.dataset.namespacesRv, onNamespace, reload);
  LL.watch('candidates', '/apis/coordination.k8s.io/v1beta1/leasecandidates', root.dataset.candidatesRv, onCandidate, reload);
  emptyStates();
})();
