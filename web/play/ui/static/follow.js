// follow.js: keeps /follow on what the instructor shows. /follow/watch says when that changed;
// the page then fetches its live part (/follow/live) and swaps it in, or reloads when the
// instructor has moved to another lesson (the stage below is another lease then). The stage
// follows its lease on its own (stage.js). Home, from this page or any page the tab reached from
// it, comes back here (live.js).
'use strict';
(function () {
  const page = document.getElementById('follow');
  if (!page) return;
  const LL = window.LL;

  function refresh() {
    LL.swap(page.dataset.liveUrl, 'follow-live').then(() => {
      const live = document.getElementById('follow-live');
      if (live && live.dataset.key !== page.dataset.key) location.reload();
    }).catch(() => {});
    LL.swap(page.dataset.planUrl, 'follow-plan-panel').catch(() => {});
  }

  // A choice for the instructor's question: sent in the background, the page redrawn with it.
  page.addEventListener('submit', (e) => {
    const form = e.target.closest('form[data-action="vote"]');
    if (!form) return;
    e.preventDefault();
    const body = new URLSearchParams(new FormData(form, e.submitter || undefined));
    fetch(form.action, { method: 'POST', body, headers: { 'X-Requested-With': 'follow.js' } })
      .then(refresh).catch(() => {});
  });

  LL.socket('follow', page.dataset.watchUrl, refresh);
})();
