// Portico portal and console: progressive enhancements only; every form also works without this file.
'use strict';

(function () {
  function announce(button, text) {
    var status = button.parentNode.querySelector('.copy-status');
    if (status) status.textContent = text;
  }

  // Copy buttons: <button data-copy-target="id">.
  document.addEventListener('click', function (event) {
    var button = event.target.closest ? event.target.closest('[data-copy-target]') : null;
    if (!button) return;
    var target = document.getElementById(button.getAttribute('data-copy-target'));
    if (!target) return;
    var text = target.value !== undefined ? target.value : target.textContent;
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(
        function () {
          announce(button, 'Copied');
        },
        function () {
          if (target.select) target.select();
          announce(button, 'Press Ctrl+C to copy');
        },
      );
    } else {
      if (target.select) target.select();
      announce(button, 'Press Ctrl+C to copy');
    }
  });

  // Forms that ask before they act: <form data-confirm="…">.
  document.addEventListener('submit', function (event) {
    var form = event.target;
    var question = form.getAttribute && form.getAttribute('data-confirm');
    if (question && !window.confirm(question)) event.preventDefault();
  });

  // Try it: the chosen app's client id is shown beside the selector.
  document.querySelectorAll('select[data-client-id-target]').forEach(function (select) {
    var show = function () {
      var option = select.options[select.selectedIndex];
      var target = document.getElementById(select.getAttribute('data-client-id-target'));
      if (target && option) target.value = option.getAttribute('data-client-id') || '';
    };
    select.addEventListener('change', show);
    show();
  });

  // API pages: an address naming an operation (#get-items) opens its collapsed section.
  function openSection(id) {
    var target = id ? document.getElementById(id) : null;
    if (!target) return;
    var details = target.tagName === 'DETAILS' ? target : target.querySelector('details');
    for (var node = details || target; node; node = node.parentElement) {
      if (node.tagName === 'DETAILS') node.open = true;
    }
  }
  function openFromAddress() {
    try {
      openSection(decodeURIComponent(window.location.hash.slice(1)));
    } catch {
      // A malformed address opens nothing.
    }
  }
  document.addEventListener('click', function (event) {
    var link = event.target.closest ? event.target.closest('a[href^="#"]') : null;
    if (link) openSection(link.getAttribute('href').slice(1));
  });
  window.addEventListener('hashchange', openFromAddress);
  openFromAddress();

  function renderResult(region, result) {
    region.textContent = '';
    if (result.token) {
      var token = document.createElement('p');
      token.className = 'tryit-token';
      token.textContent =
        'Access token (' +
        (result.token.grant || 'client credentials') +
        '): scope ' +
        (result.token.scope || '(none)') +
        ', expires in ' +
        result.token.expiresIn +
        ' s (' +
        result.token.expiresAt +
        ')';
      region.appendChild(token);
    }
    var line = document.createElement('p');
    var ok = result.status >= 200 && result.status < 400;
    line.className = 'status-line ' + (ok ? 'ok' : 'bad');
    line.textContent = result.error
      ? 'Code: ' + (result.status || 0) + ' ' + result.error
      : 'Code: ' + result.status + ' ' + result.statusText + ' — ' + result.timeMs + ' ms';
    region.appendChild(line);
    if (result.headers && result.headers.length) {
      var h = document.createElement('h4');
      h.textContent = 'Response headers';
      region.appendChild(h);
      var pre = document.createElement('pre');
      pre.tabIndex = 0;
      pre.textContent = result.headers
        .map(function (pair) {
          return pair[0] + ': ' + pair[1];
        })
        .join('\n');
      region.appendChild(pre);
    }
    if (result.body !== undefined && result.body !== '') {
      var hb = document.createElement('h4');
      hb.textContent = 'Response body';
      region.appendChild(hb);
      var body = document.createElement('pre');
      body.tabIndex = 0;
      body.className = 'tryit-body';
      body.textContent = result.body;
      region.appendChild(body);
    }
  }

  // Try it: send through the portal server with fetch and show the answer in place.
  document.querySelectorAll('form.tryit-form').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var region = form.parentNode.querySelector('.tryit-result');
      var button = form.querySelector('button[type="submit"]');
      var params = new URLSearchParams(new FormData(form));
      button.disabled = true;
      region.textContent = 'Sending…';
      fetch(form.action, {
        method: 'POST',
        credentials: 'same-origin',
        headers: {
          Accept: 'application/json',
          'Content-Type': 'application/x-www-form-urlencoded',
          'X-CSRF-Token': form.querySelector('input[name="_csrf"]').value,
        },
        body: params.toString(),
      })
        .then(function (response) {
          return response.json();
        })
        .then(function (result) {
          renderResult(region, result);
        })
        .catch(function (error) {
          renderResult(region, { status: 0, error: 'No response received (' + error.message + ')' });
        })
        .finally(function () {
          button.disabled = false;
        });
    });
  });
})();
