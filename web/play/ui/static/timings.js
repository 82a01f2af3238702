// timings.js: the sliders of /timings. Moving one writes its value beside it and, a moment
// later, fetches the verdict at the three values from the server (/timings/live, the same
// component as the page's first paint) and swaps it in; the address keeps the values, so the
// page can be shared and reloaded as it is.
'use strict';
(function () {
  const form = document.querySelector('[data-testid=timings-form]');
  if (!form) return;
  const LL = window.LL;
  let timer = 0;

  function query() {
    const q = new URLSearchParams();
    for (const input of form.querySelectorAll('input[type=range]')) q.set(input.name, input.value);
    return q.toString();
  }

  function refresh() {
    timer = 0;
    const q = query();
    history.replaceState(null, '', '/timings?' + q);
    LL.swap('/timings/live?' + q, 'timings-live').catch(() => {});
  }

  form.addEventListener('input', (ev) => {
    const input = ev.target;
    const out = form.querySelector('output[for="' + input.name + '"]');
    if (out) out.textContent = LL.t('tp.seconds', input.value);
    clearTimeout(timer);
    timer = setTimeout(refresh, 120);
  });
  form.addEventListener('submit', (ev) => { ev.preventDefault(); refresh(); });
})();
