// dashboard.js: keeps the server-rendered dashboard current with what the server renders. The
// dashboard's stream (/ui/dashboard/watch) sends every lease card, tab row, LeaseCandidate row,
// elections row, feed line, count and list that changes, rendered by the same templates as the
// page and keyed by its element's id; this script puts each in place, changing only what
// differs, so that focus, a choice being made and an open fold survive. What is left here is
// the page's own: the namespace filter, the renewals counted since the page opened, the ages
// that tick, the fault buttons' commands (sent back over the same stream) and the room's fold.
// A page that shows a past moment (/?at=, or the time control) follows no stream.
'use strict';
(function () {
  const root = document.getElementById('dashboard');
  if (!root) return;
  const LL = window.LL;
  const filter = document.getElementById('ns-filter');
  const openTabNS = document.getElementById('open-tab-namespace');
  const newLeaseNS = document.getElementById('new-lease-namespace');
  const room = document.getElementById('room'); // the instructor's, in workshop mode
  const download = document.getElementById('download-recording');
  const lists = ['lease-grid', 'tabs', 'candidates', 'elections'];
  const maxFeed = 60;
  let nsFilter = filter.value;
  const enc = encodeURIComponent;

  // --- putting the server's elements in place ---------------------------------------------
  /** The element of a fragment, parsed inert (a <template> takes table rows as they are). */
  function parse(html) {
    const doc = new DOMParser().parseFromString('<template>' + html + '</template>', 'text/html');
    const el = doc.querySelector('template').content.firstElementChild;
    return el ? document.importNode(el, true) : null;
  }

  /** Makes cur's attributes next's; an open fold is the reader's own. */
  function syncAttributes(cur, next) {
    const own = (name) => name === 'open' && cur.tagName === 'DETAILS';
    for (const a of Array.from(cur.attributes)) if (!next.hasAttribute(a.name) && !own(a.name)) cur.removeAttribute(a.name);
    for (const a of Array.from(next.attributes)) if (!own(a.name) && cur.getAttribute(a.name) !== a.value) cur.setAttribute(a.name, a.value);
  }

  /**
   * Makes the page's node cur what next (the same node as the server renders it now) is,
   * keeping every node that stays; returns the node that stands for next on the page.
   */
  function morph(cur, next) {
    if (cur.nodeType !== next.nodeType || cur.nodeName !== next.nodeName) {
      cur.replaceWith(next);
      return next;
    }
    if (cur.nodeType !== Node.ELEMENT_NODE) {
      if (cur.nodeValue !== next.nodeValue) cur.nodeValue = next.nodeValue;
      return cur;
    }
    const chosen = cur.tagName === 'SELECT' ? keepChoice(cur) : null;
    syncAttributes(cur, next);
    let node = cur.firstChild;
    for (const n of Array.from(next.childNodes)) {
      if (node) node = morph(node, n).nextSibling;
      else cur.appendChild(n);
    }
    while (node) {
      const gone = node;
      node = node.nextSibling;
      gone.remove();
    }
    if (chosen) chosen();
    return cur;
  }

  /**
   * A choice (a tab row's delay) stays as the reader left it, unless the server's choice (the
   * option it marks selected: the delay in force) changed while the reader was not at it.
   * Returns what to do once the options are the server's.
   */
  function keepChoice(sel) {
    const marked = () => { const o = sel.querySelector('option[selected]'); return o ? o.value : null; };
    const kept = sel.value;
    const was = marked();
    return () => {
      const now = marked();
      if (now !== null && now !== was && document.activeElement !== sel) sel.value = now;
      else if (Array.from(sel.options).some((o) => o.value === kept)) sel.value = kept;
    };
  }

  /** Puts a fragment in place: in its list before the element named, or in place of its own. */
  function put(f) {
    const next = parse(f.html);
    if (!next) return;
    const cur = document.getElementById(f.id);
    if (!f.in) {
      if (cur) morph(cur, next);
      return;
    }
    const list = document.getElementById(f.in);
    if (!list) return;
    const el = cur ? morph(cur, next) : next;
    const before = f.before ? document.getElementById(f.before) : null;
    if (before && before.parentNode === list) {
      if (el.nextElementSibling !== before) list.insertBefore(el, before);
    } else if (el.parentNode !== list || (!f.before && el.nextElementSibling)) {
      list.appendChild(el);
    }
    hide(el);
  }

  function onDash(msg) {
    const feedList = document.getElementById('feed');
    if (msg.reset) {
      // The whole live part (in this message and those right after it): what it does not
      // keep is gone.
      const keep = new Set(msg.keep || []);
      for (const id of lists) for (const el of Array.from(document.getElementById(id).children)) if (!keep.has(el.id)) el.remove();
      feedList.replaceChildren();
    }
    for (const id of msg.gone || []) {
      const el = document.getElementById(id);
      if (el) el.remove();
    }
    // Last first: the element each goes before is in place when it comes.
    for (const f of (msg.put || []).slice().reverse()) put(f);
    for (const html of msg.feed || []) {
      const li = parse(html);
      if (!li) continue;
      feedList.insertBefore(li, feedList.firstChild);
      hide(li);
    }
    while (feedList.children.length > maxFeed) feedList.lastElementChild.remove();
    if (msg.renewals) renewals(msg.renewals);
    LL.updateRings();
    tickAges();
    emptyStates();
    // The time control (scrub.js) marks the events of the history.
    if (msg.history) document.dispatchEvent(new CustomEvent('ll:history'));
  }

  // --- renewals, counted since the page opened ---------------------------------------------
  let renewalCount = 0;
  function renewals(n) {
    const el = document.getElementById('renewal-count');
    renewalCount += n;
    el.textContent = String(renewalCount);
    LL.setText(el.parentElement, 'renewal-words', LL.t(renewalCount === 1 ? 'dash.renewal1' : 'dash.renewals'));
  }

  // --- how long ago each election decision was taken ----------------------------------------
  function tickAges() {
    if (LL.moment()) return; // a past moment's ages are the server's, as of that moment
    for (const row of document.querySelectorAll('#elections [data-election-row]')) {
      const at = Number(row.dataset.at) || 0;
      if (row.dataset.kind && at) LL.setText(row, 'age', LL.ago(at));
    }
  }
  setInterval(() => { if (!document.hidden) tickAges(); }, 1000);

  // --- the namespace filter ----------------------------------------------------------------
  /** Hides el when the namespace filter leaves it out. */
  function hide(el) {
    if ('namespace' in el.dataset) el.hidden = !!nsFilter && el.dataset.namespace !== nsFilter;
  }

  /** Hides what the namespace filter leaves out; the room shows every namespace's tabs. */
  function hideFiltered() {
    for (const el of root.querySelectorAll('[data-lease-card], [data-tab-row], [data-candidate-row], [data-election-row], .feed-item')) hide(el);
    if (room) room.hidden = !!nsFilter;
    emptyStates();
  }

  /** Shows the namespace the filter names; push makes it a step Back returns from. */
  function applyFilter(push) {
    const changed = nsFilter !== filter.value;
    nsFilter = filter.value;
    hideFiltered();
    if (changed) send.reopen(); // the new namespace's live part
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
  // "Clear finished lessons" answers with ?cleared=N, said once: a reload does not say it again.
  if (new URL(location.href).searchParams.has('cleared')) {
    const u = new URL(location.href);
    u.searchParams.delete('cleared');
    history.replaceState(null, '', u.href);
  }

  // --- the room (workshop mode) ------------------------------------------------------------
  if (room) {
    // Folded, the room stays folded across reloads of this browser.
    try { if (localStorage.getItem('leaselab.room') === 'folded') room.open = false; } catch (_) { /* no storage */ }
    room.addEventListener('toggle', () => {
      try { localStorage.setItem('leaselab.room', room.open ? 'open' : 'folded'); } catch (_) { /* no storage */ }
    });
    // A participant's name shows that participant's namespace.
    room.addEventListener('click', (e) => {
      const b = e.target.closest('.room-name');
      if (!b) return;
      if (!Array.from(filter.options).some((o) => o.value === b.dataset.namespace)) filter.add(new Option(b.dataset.namespace, b.dataset.namespace));
      filter.value = b.dataset.namespace;
      applyFilter(true);
    });
  }

  // --- fault commands to the candidate tabs ------------------------------------------------
  const tabsList = document.getElementById('tabs');
  /** A tab row's faults, as the server rendered them: a button's command depends on them. */
  function faultsOf(row) {
    try { return JSON.parse(row.dataset.faults || '{}'); } catch (_) { return {}; }
  }
  /** The delay chosen on a tab row, in ms; 0 for "auto". */
  function chosenDelay(row) {
    const sel = LL.field(row, 'delay');
    return sel ? Number(sel.value) || 0 : 0;
  }
  function command(row, cmd) {
    if (cmd && !send({ type: 'command', tab: row.dataset.tabId, command: cmd })) flashTab(row.dataset.tabId, LL.t('js.notConnected'));
  }
  tabsList.addEventListener('click', (e) => {
    const b = e.target.closest('[data-cmd]');
    const row = b && b.closest('[data-tab-row]');
    if (row) command(row, LL.faultCommand(b.dataset.cmd, faultsOf(row), { delayMs: chosenDelay(row) }));
  });
  // A new delay for a tab whose network is slow already applies at once; "auto" (no delay
  // named) lets the tab choose by its own timings.
  tabsList.addEventListener('change', (e) => {
    const sel = e.target.closest('[data-field="delay"]');
    const row = sel && sel.closest('[data-tab-row]');
    if (!row || !(faultsOf(row).latencyMs > 0)) return;
    const ms = chosenDelay(row);
    command(row, ms ? { type: 'slow', latencyMs: ms } : { type: 'slow' });
  });
  /** Says on a tab's row why its command failed, until the row is rendered again. */
  function flashTab(id, text) {
    const row = tabsList.querySelector('[data-tab-id="' + CSS.escape(id || '') + '"]');
    if (row) LL.setText(row, 'log', LL.t('js.commandFailed', text));
  }

  // --- empty states -------------------------------------------------------------------------
  function emptyStates() {
    const visible = (sel) => Array.from(root.querySelectorAll(sel)).some((el) => !el.hidden);
    document.getElementById('no-leases').hidden = visible('#lease-grid [data-lease-card]');
    document.getElementById('no-tabs').hidden = visible('#tabs [data-tab-row]');
    document.getElementById('no-candidates').hidden = visible('#candidates [data-candidate-row]');
    document.getElementById('no-elections').hidden = visible('#elections [data-election-row]');
  }

  // --- the streams --------------------------------------------------------------------------
  /** Sends a fault command over the dashboard's stream; false while not connected. */
  let send = () => false;
  send.reopen = () => {};
  if (!root.dataset.at) {
    // The live part of the namespace shown (all when none is): a participant's dashboard is
    // not sent every other lease's renewals; a new filter connects again.
    send = LL.socket('dashboard', () => '/ui/dashboard/watch' + (nsFilter ? '?namespace=' + enc(nsFilter) : ''), (msg) => {
      if (msg.type === 'dash') onDash(msg);
      if (msg.type === 'error') flashTab(msg.tab, msg.error);
    });
  }
  emptyStates();
})();
