// capdir console: live regions and fetch-submitted forms. No inline script, no
// third-party code; every page works without this file (it only saves reloads).
(function () {
  'use strict';
  var meta = document.querySelector('meta[name="csrf-token"]');
  var csrf = meta ? meta.getAttribute('content') : '';

  // swap replaces each element of ids in the page with its namesake in html.
  function swap(html, selector) {
    var doc = new DOMParser().parseFromString(html, 'text/html');
    document.querySelectorAll(selector).forEach(function (el) {
      var fresh = el.id && doc.getElementById(el.id);
      if (fresh) {
        el.replaceWith(document.importNode(fresh, true));
      }
    });
  }

  // Live regions: an element with data-live="TOPIC" (and an id) is rendered again
  // by the server whenever the log brings a change of that topic.
  var regions = document.querySelectorAll('[data-live]');
  if (regions.length && window.EventSource) {
    var topics = [];
    regions.forEach(function (el) { topics.push(el.getAttribute('data-live')); });
    var since = document.body.getAttribute('data-live-since') || '';
    var source = new EventSource('/console/events?topics=' + encodeURIComponent(topics.join(',')) +
      '&since=' + encodeURIComponent(since));
    var timer = null;
    var refresh = function () {
      timer = null;
      fetch(location.href, { credentials: 'same-origin', headers: { 'X-Console-Live': '1' } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) { if (html) { swap(html, '[data-live]'); } })
        .catch(function () {});
    };
    source.addEventListener('change', function () {
      if (!timer) { timer = setTimeout(refresh, 300); }
    });
    document.body.setAttribute('data-live-connected', '1');
  }

  // A form with data-fetch is sent with fetch and the session's CSRF header; the
  // answer's main content replaces the page's, so its outcome shows in place.
  document.addEventListener('submit', function (e) {
    var form = e.target;
    if (!form.hasAttribute || !form.hasAttribute('data-fetch') || !window.fetch) {
      return;
    }
    e.preventDefault();
    var button = form.querySelector('button[type="submit"]');
    if (button) { button.disabled = true; }
    fetch(form.action, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'X-CSRF-Token': csrf }, body: new URLSearchParams(new FormData(form))
    }).then(function (r) { return r.text(); })
      .then(function (html) {
        swap(html, 'main');
        var main = document.getElementById('main');
        if (main) { main.focus(); }
      })
      .catch(function () { if (button) { button.disabled = false; } });
  });
})();
