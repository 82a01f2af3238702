// arena.js: the panel of the lesson whose cast is the room (templates/arena.templ). Its forms
// (a tab's fault, a random third, heal every network, a simulated tab) post in the background;
// the live part then comes back as the server renders it. Before the lesson runs, the panel
// follows the tabs as they join (the hub's list, /ui/tabs/watch); while it runs, scenario.js
// swaps the live part whenever the run, and so the room, changes.
'use strict';
(function () {
  const page = document.getElementById('scenario');
  if (!page || !document.querySelector('[data-testid="room"]')) return;
  const LL = window.LL;

  /** The join link as the room types it: with this page's host. */
  function showLink() {
    for (const a of document.querySelectorAll('[data-room-link]')) {
      const abs = new URL(a.getAttribute('href'), location.href).href;
      if (a.textContent !== abs) a.textContent = abs;
    }
  }

  let inflight = false;
  let again = false;
  function refresh() {
    if (inflight) { again = true; return; }
    inflight = true;
    LL.swap(page.dataset.liveUrl, 'scenario-live')
      .catch(() => {})
      .finally(() => { inflight = false; if (again) { again = false; refresh(); } });
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

  page.addEventListener('submit', (e) => {
    const form = e.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.room) return;
    e.preventDefault();
    for (const b of form.querySelectorAll('button')) b.disabled = true;
    fetch(form.action, { method: 'POST', body: new URLSearchParams(new FormData(form)), headers: { 'X-Requested-With': 'room-panel' } })
      .then((r) => {
        if (r.ok) return;
        return r.text().then((html) => {
          const m = new DOMParser().parseFromString(html, 'text/html').querySelector('[data-testid=error-message]');
          throw new Error(m ? m.textContent : 'HTTP ' + r.status);
        });
      })
      .catch((err) => showError(err.message))
      .finally(refresh);
  });

  // Before the run, nothing else tells the page that a tab joined: at most a swap a second.
  let due = null;
  function joined() {
    const l = document.getElementById('scenario-live');
    if (due || (l && l.dataset.running === 'true')) return;
    due = setTimeout(() => { due = null; refresh(); }, 1000);
  }
  LL.socket('room', '/ui/tabs/watch?changes=1&namespace=' + encodeURIComponent(page.dataset.namespace), joined);

  document.addEventListener('ll:swapped', showLink);
  showLink();
})();
