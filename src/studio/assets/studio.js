/* global document, window, navigator, fetch, URLSearchParams, FormData, Event, setTimeout, clearTimeout, setInterval, clearInterval */
// Rendergate studio: progressive enhancement only. Every page works without this file; with it, the price
// follows the form, image addresses get a preview, queued renders update in place, keys copy in a click.
'use strict';
(function () {
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  document.documentElement.classList.add('js');

  // The header's menu on a phone: one button opens and closes it.
  const toggle = document.querySelector('.menu-toggle');
  const menu = document.getElementById('site-menu');
  if (toggle && menu) {
    toggle.hidden = false;
    toggle.addEventListener('click', () => {
      const open = toggle.getAttribute('aria-expanded') !== 'true';
      toggle.setAttribute('aria-expanded', String(open));
      menu.classList.toggle('open', open);
    });
  }

  // Live price: the server's quote (the API's own code) for the form as it is now.
  for (const form of $$('form.render-form')) {
    const out = form.querySelector('#price');
    const touched = new Set();
    let timer = null;
    let seq = 0;
    const update = async () => {
      const mine = ++seq;
      try {
        const res = await fetch(form.dataset.quote, {
          method: 'POST',
          body: new URLSearchParams(new FormData(form)),
          credentials: 'same-origin',
        });
        if (!res.ok || mine !== seq) return;
        const q = await res.json();
        out.textContent = q.price === null ? 'fill in the required fields above' : q.price;
        for (const p of $$('[data-error-for]', form)) {
          const name = p.dataset.errorFor;
          p.textContent = touched.has(name) ? q.errors[name] || '' : '';
        }
      } catch {
        /* offline: the price shown stays */
      }
    };
    const changed = (e) => {
      if (e.target && e.target.name) touched.add(e.target.name);
      clearTimeout(timer);
      timer = setTimeout(update, 200);
    };
    form.addEventListener('input', changed);
    form.addEventListener('change', changed);
    form.addEventListener('submit', () => {
      const b = form.querySelector('button[type=submit]');
      if (b) b.setAttribute('aria-busy', 'true');
    });
  }

  // Preview of image addresses; an uploaded image is shown through the studio (its /v1 address needs a key).
  for (const input of $$('input[data-preview]')) {
    const img = document.getElementById(input.dataset.preview);
    if (!img) continue;
    const prefix = input.form ? input.form.dataset.uploadPrefix || '' : '';
    const show = () => {
      const v = input.value.trim();
      if (prefix && v.startsWith(prefix)) {
        img.src = '/uploads/' + v.slice(prefix.length);
        img.hidden = false;
      } else if (/^https?:\/\/\S+$/i.test(v)) {
        img.src = v;
        img.hidden = false;
      } else {
        img.hidden = true;
        img.removeAttribute('src');
      }
    };
    img.addEventListener('error', () => {
      img.hidden = true;
    });
    input.addEventListener('change', show);
    input.addEventListener('input', show);
  }

  // Uploads: the chosen file goes to the studio's /uploads; its address fills the field.
  for (const file of $$('input[type=file][data-upload-for]')) {
    const target = document.getElementById(file.dataset.uploadFor);
    const status = document.getElementById(file.dataset.uploadFor + '-upload-err');
    file.addEventListener('change', async () => {
      const f = file.files && file.files[0];
      if (!f || !target) return;
      status.textContent = 'Uploading…';
      try {
        const res = await fetch('/uploads', {
          method: 'POST',
          body: f,
          credentials: 'same-origin',
          headers: {
            'content-type': f.type || 'application/octet-stream',
            'x-csrf-token': file.form.querySelector('input[name=_csrf]').value,
          },
        });
        const body = await res.json().catch(() => ({}));
        if (!res.ok) {
          status.textContent = body.message || 'The upload failed.';
          return;
        }
        status.textContent = '';
        target.value = body.url;
        target.dispatchEvent(new Event('input', { bubbles: true }));
      } catch {
        status.textContent = 'The upload failed; check the connection and try again.';
      }
    });
  }

  // Queued renders: their row is fetched again at each event of the render's live stream
  // (EventSource, /history/{id}/events), and once more at its final state. Without a stream (an old
  // browser, the account's streams all in use, a broken connection) the row is fetched until it is
  // final, less often as it waits (every request counts against the account's per-minute limit), and
  // after Retry-After when the limit is reached.
  const refresh = async (li) => {
    const res = await fetch(li.dataset.row, { credentials: 'same-origin' });
    if (res.ok) {
      const balance = document.querySelector('#balance strong');
      const cents = Number(res.headers.get('x-balance-cents'));
      if (balance && res.headers.has('x-balance-cents') && Number.isInteger(cents))
        balance.textContent = '€' + (cents / 100).toFixed(2);
      const html = (await res.text()).trim();
      const tpl = document.createElement('template');
      tpl.innerHTML = html;
      const next = tpl.content.firstElementChild;
      if (next && next.outerHTML !== li.outerHTML) {
        const focused = li.contains(document.activeElement);
        li.replaceWith(next);
        if (focused) next.querySelector('a, button')?.focus();
        wire(next);
        return { res, li: next };
      }
    }
    return { res, li };
  };
  const poll = (li) => {
    let delay = 1000;
    const tick = async () => {
      if (!li.isConnected) return;
      let wait = delay;
      delay = Math.min(delay * 1.5, 5000);
      try {
        const r = await refresh(li);
        li = r.li;
        if (r.res.status === 429)
          wait = Math.max(wait, 1000 * (Number(r.res.headers.get('retry-after')) || 5));
        if (r.res.ok && li.dataset.status !== 'queued') return;
      } catch {
        /* try again */
      }
      setTimeout(tick, wait);
    };
    setTimeout(tick, delay);
  };
  const follow = (li) => {
    if (!window.EventSource || !li.dataset.events) return poll(li);
    const es = new window.EventSource(li.dataset.events, { withCredentials: true });
    let busy = false;
    let again = false;
    let seen = false;
    const update = async (final) => {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      try {
        li = (await refresh(li)).li;
      } catch {
        /* the next event, or the final one, fetches it again */
      }
      busy = false;
      if (again || (final && li.dataset.status === 'queued')) {
        again = false;
        setTimeout(() => update(final), final ? 500 : 0);
      }
    };
    // A waiting render's place in the queue moves without an event of its own: its row is fetched
    // again now and then while it waits to start.
    const waiting = setInterval(() => {
      if (!li.isConnected || es.readyState === window.EventSource.CLOSED) clearInterval(waiting);
      else if (/position \d+ in queue/.test(li.textContent)) void update(false);
    }, 5000);
    es.addEventListener('generation', (e) => {
      seen = true;
      let g = null;
      try {
        g = JSON.parse(e.data);
      } catch {
        /* not ours: the row says */
      }
      const final = g !== null && g.status !== 'queued';
      // the server ends the stream after the final state: the browser must not reconnect
      if (final) es.close();
      if (!li.isConnected) return es.close();
      void update(final);
    });
    es.addEventListener('error', () => {
      // refused (429, a page instead of a stream) or the connection lost before any event: poll
      if (es.readyState === window.EventSource.CLOSED || !seen) {
        es.close();
        poll(li);
      }
    });
  };
  const wire = (root) => {
    for (const form of $$('form[data-confirm]', root)) {
      form.addEventListener('submit', (e) => {
        if (!window.confirm(form.dataset.confirm)) e.preventDefault();
      });
    }
  };
  wire(document);
  for (const li of $$('li.gen[data-status="queued"]')) follow(li);

  // A model card's example video plays while the pointer is over its card, or its link has focus.
  for (const v of $$('video[data-hover-play]')) {
    const card = v.closest('.card') || v;
    const play = () => v.play().catch(() => {});
    const stop = () => v.pause();
    card.addEventListener('mouseenter', play);
    card.addEventListener('mouseleave', stop);
    card.addEventListener('focusin', play);
    card.addEventListener('focusout', stop);
  }

  // Copy buttons.
  for (const b of $$('button[data-copy]')) {
    b.addEventListener('click', async () => {
      const input = document.getElementById(b.dataset.copy);
      try {
        await navigator.clipboard.writeText(input.value);
      } catch {
        input.select();
        document.execCommand('copy');
      }
      b.textContent = 'Copied';
    });
  }
})();
