// The operator console of computer-control (PROTOCOL §8).
//
// Driven by the event stream (GET /events, read with fetch streaming) and by
// system.status polls. The operator token is posted once to /console/login; after that
// the page is signed in by an HttpOnly session cookie plus this tab's key (the
// X-Console-Key header, kept in sessionStorage), so no URL ever carries a secret.
// Everything the server says is inserted as text (textContent), never as HTML.
// No framework and nothing loaded from the network: this file is the whole app.
'use strict';

(() => {
  const KEY_KEY = 'cc-console-key';
  const TRAIL_MAX = 300;
  const STATUS_EVERY_MS = 1000;

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };

  const app = {
    key: null, // this tab's half of the sign-in; the cookie is the other
    role: null,
    lastSeq: 0,
    state: 'unknown',
    status: null,
    pending: new Map(), // request_id -> {request_id, tool, arguments, risk, reason, deadline, timeout_s, card}
    governed: new Map(), // "sessionId/actionId" -> {r (the approval request), card, deciding}
    govLoading: false,
    govAgain: false,
    trail: [], // newest last
    frame: {etag: null, url: null, region: null, size: null, number: 0},
    streamAbort: null,
    running: false,
    rpcId: 0,
  };

  // ---------------------------------------------------------------- token

  // Tokens in the address (`#token=`) are no longer accepted: they stay in the history
  // and autocomplete. One still arriving is removed from the address bar at once.
  function dropTokenFromAddress() {
    if (!/(?:^#|&)token=/.test(location.hash)) return false;
    history.replaceState(null, '', location.pathname + location.search);
    return true;
  }

  // An MCP host's approval prompt links here as `#approval=<request id>` (a governed
  // action: `<sessionId>/<actionId>`). The link grants nothing: the page still needs
  // the operator's sign-in. It only marks the card the person was told about.
  function linkedApproval() {
    const m = /(?:^#|&)approval=([^&]+)/.exec(location.hash);
    if (!m) return null;
    try { return decodeURIComponent(m[1]); } catch (_) { return null; }
  }

  function markLinked() {
    const id = linkedApproval();
    for (const c of document.querySelectorAll('.card-linked')) c.classList.remove('card-linked');
    if (!id) return;
    const card = [...document.querySelectorAll('article.card')].find(c =>
      c.dataset.requestId === id || (c.dataset.sessionId + '/' + c.dataset.actionId) === id);
    if (!card) return;
    card.classList.add('card-linked');
    card.scrollIntoView({block: 'center'});
  }
  window.addEventListener('hashchange', markLinked);

  function showLogin(message) {
    app.running = false;
    if (app.streamAbort) app.streamAbort.abort();
    $('app').hidden = true;
    $('login').hidden = false;
    $('logout').hidden = true;
    $('panic').disabled = true;
    $('resume').disabled = true;
    $('login-error').textContent = message || '';
    $('token').focus();
  }

  // Posts the operator token once; the answer sets the session cookie and gives this
  // tab its key.
  async function signIn(token) {
    let res;
    try {
      res = await fetch('/console/login', {
        method: 'POST',
        headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({token}),
        cache: 'no-store',
      });
    } catch (e) {
      showLogin('The server cannot be reached: ' + e.message);
      return;
    }
    const out = await res.json().catch(() => ({}));
    if (!res.ok || !out.key) {
      showLogin(out.message || ('The server answered ' + res.status + '.'));
      return;
    }
    app.key = out.key;
    sessionStorage.setItem(KEY_KEY, out.key);
    enter();
  }

  async function enter() {
    let res;
    try {
      res = await fetch('/whoami', {headers: auth(), cache: 'no-store'});
    } catch (e) {
      showLogin('The server cannot be reached: ' + e.message);
      return;
    }
    if (res.status === 401 || res.status === 403) {
      forget();
      showLogin('Your session has ended: sign in again.');
      return;
    }
    if (!res.ok) {
      showLogin('The server answered ' + res.status + '.');
      return;
    }
    const who = await res.json();
    app.role = who.role;
    $('login').hidden = true;
    $('app').hidden = false;
    $('logout').hidden = false;
    const role = $('role');
    role.hidden = false;
    role.textContent = who.role === 'operator' ? 'operator' : 'agent token: watch only';
    role.className = 'role role-' + who.role;
    if (who.role !== 'operator') {
      banner('This is the agent token: you can watch, and stop the session, but approving, denying and resuming need the operator token.', 'warn');
    }
    start();
  }

  function auth() {
    return {'X-Console-Key': app.key || ''};
  }

  // Every signed-in request goes through here so signing out can cancel them all first:
  // a request still in flight when the session ends would otherwise come back refused.
  const inflight = new AbortController();
  function signedFetch(url, opts) {
    return fetch(url, Object.assign({cache: 'no-store', signal: inflight.signal}, opts));
  }

  function forget() {
    app.key = null;
    sessionStorage.removeItem(KEY_KEY);
  }

  // ---------------------------------------------------------------- rpc

  async function rpc(method, params) {
    const body = JSON.stringify({jsonrpc: '2.0', id: ++app.rpcId, method, params: params || {}});
    const res = await signedFetch('/rpc', {
      method: 'POST',
      headers: Object.assign({'Content-Type': 'application/json'}, auth()),
      body,
      cache: 'no-store',
    });
    if (res.status === 401) {
      showLogin('Your session has ended: sign in again.');
      throw new Error('unauthorized');
    }
    const msg = await res.json();
    if (msg.error) throw new Error(msg.error.message || ('error ' + msg.error.code));
    return msg.result; // the envelope
  }

  // ---------------------------------------------------------------- events

  async function streamEvents() {
    let backoff = 500;
    while (app.running) {
      const ctrl = new AbortController();
      app.streamAbort = ctrl;
      try {
        const headers = auth();
        if (app.lastSeq > 0) headers['Last-Event-ID'] = String(app.lastSeq);
        const res = await fetch('/events', {headers, cache: 'no-store', signal: ctrl.signal});
        if (res.status === 401) { showLogin('Your session has ended: sign in again.'); return; }
        if (!res.ok || !res.body) throw new Error('events: HTTP ' + res.status);
        setLink(true);
        backoff = 500;
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        let buf = '';
        let first = true;
        for (;;) {
          const {value, done} = await reader.read();
          if (done) break;
          buf += decoder.decode(value, {stream: true});
          let cut;
          while ((cut = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            const ev = parseBlock(block);
            if (!ev) continue;
            // Numbers began again below what we had: the server restarted.
            if (first && ev.seq <= app.lastSeq) resetView();
            first = false;
            if (ev.seq <= app.lastSeq) continue;
            app.lastSeq = ev.seq;
            onEvent(ev);
          }
        }
      } catch (e) {
        if (!app.running) return;
      }
      setLink(false);
      await sleep(backoff);
      backoff = Math.min(backoff * 2, 5000);
    }
  }

  function parseBlock(block) {
    let data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        if (line.startsWith(': dropped')) banner('This console fell behind and lost some events; the trail may be incomplete.', 'warn');
        continue;
      }
      if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (!data.length) return null;
    try { return JSON.parse(data.join('\n')); } catch (_) { return null; }
  }

  function onEvent(ev) {
    const p = ev.payload || {};
    switch (ev.type) {
      case 'safety.confirmation_requested':
        addPending({
          request_id: p.request_id, tool: p.tool, arguments: p.arguments, risk: p.risk,
          reason: p.reason, timeout_s: p.timeout_s, description: p.description,
          deadline: deadlineFrom(p.expires_at, p.timeout_s, ev.at),
        });
        trailSystem(ev, 'confirm', 'Confirmation requested', described(p.description, p.tool).title + ' — ' + (p.reason || ''));
        if (app.state === 'ready') setState('confirming');
        break;
      case 'safety.confirmation_resolved':
        removePending(p.request_id, p.approve ? 'approved' : 'denied');
        if (app.state === 'confirming' && app.pending.size === 0) setState('ready');
        trailSystem(ev, p.approve ? 'ok' : 'deny', p.approve ? 'Approved' : 'Denied',
          (p.tool || '') + (p.reason ? ' — ' + p.reason : ''));
        break;
      case 'safety.confirmation_expired':
        removePending(p.request_id, 'expired');
        trailSystem(ev, 'deny', 'Expired', 'No decision in time: denied automatically');
        break;
      case 'governance.approval_requested':
        trailSystem(ev, 'confirm', 'Governed action awaits approval',
          described(p.description, p.tool).title + (Array.isArray(p.reasons) ? ' — ' + p.reasons.join('; ') : ''));
        refreshGoverned();
        break;
      case 'governance.approval_resolved':
        trailSystem(ev, p.status === 'approved' ? 'ok' : 'deny',
          p.status === 'approved' ? 'Governed action approved' : 'Governed action denied',
          (p.actionId || '') + (p.grantId ? ' — grant ' + p.grantId : ''));
        refreshGoverned();
        break;
      case 'action.started':
        trailAction(ev, p);
        break;
      case 'action.finished':
        finishAction(ev, p);
        if (p.tool === 'screen.capture' && p.ok) refreshFrame();
        break;
      case 'batch.finished':
        trailSystem(ev, p.status === 'completed' ? 'ok' : 'deny', 'Batch ' + p.status,
          (Array.isArray(p.items) ? p.items.length : p.items) + ' items');
        break;
      case 'safety.panic_triggered':
        setState('stopped');
        trailSystem(ev, 'stop', 'Emergency stop', SOURCES[p.source] || p.source || '');
        break;
      case 'safety.panic_released':
        trailSystem(ev, 'ok', 'Stop released', SOURCES[p.source] || p.source || '');
        break;
      case 'session.started':
        setState(p.state || 'ready');
        trailSystem(ev, 'info', 'Session started', (p.platform || '') + ' ' + surfaceText(p.surface));
        break;
      case 'session.stopped':
        setState('idle');
        for (const id of [...app.pending.keys()]) removePending(id, 'cancelled');
        trailSystem(ev, 'info', 'Session stopped', '');
        break;
      case 'session.resumed':
        trailSystem(ev, 'ok', 'Resumed', 'from ' + (p.from || '?'));
        break;
      case 'session.idle':
        trailSystem(ev, 'info', 'Idle', 'no action for ' + p.after_s + ' s');
        break;
      case 'session.configured':
        trailSystem(ev, 'info', p.surface ? 'Screen layout changed' : 'Configuration changed',
          p.surface ? surfaceText(p.surface) : Object.keys(p.patch || {}).join(', '));
        break;
      default:
        trailSystem(ev, 'info', ev.type, '');
    }
    scheduleStatus();
  }

  function resetView() {
    app.pending.forEach((_, id) => removePending(id, null));
    app.trail = [];
    $('trail').textContent = '';
    app.lastSeq = 0;
    updateCounts();
  }

  // ---------------------------------------------------------------- describing actions

  const SOURCES = {
    hotkey: 'by the emergency hotkey',
    protocol: 'by control.panic (this console or the API)',
    file: 'by the panic file',
  };

  const KEY_NAMES = {
    win: 'Win', lwin: 'Left Win', rwin: 'Right Win', super: 'Super', meta: 'Meta', cmd: 'Cmd',
    ctrl: 'Ctrl', lctrl: 'Left Ctrl', rctrl: 'Right Ctrl', alt: 'Alt', lalt: 'Left Alt', ralt: 'Right Alt',
    shift: 'Shift', lshift: 'Left Shift', rshift: 'Right Shift', esc: 'Esc', enter: 'Enter', tab: 'Tab',
    space: 'Space', backspace: 'Backspace', delete: 'Delete', insert: 'Insert', home: 'Home', end: 'End',
    pgup: 'Page Up', pgdn: 'Page Down', up: '↑', down: '↓', left: '←', right: '→', apps: 'Menu',
    capslock: 'Caps Lock', numlock: 'Num Lock', scrolllock: 'Scroll Lock', printscreen: 'Print Screen', pause: 'Pause',
  };
  const DANGER_KEYS = new Set(['win', 'lwin', 'rwin', 'super', 'meta', 'cmd']);
  const MODIFIERS = new Set(['ctrl', 'lctrl', 'rctrl', 'alt', 'lalt', 'ralt', 'shift', 'lshift', 'rshift']);

  function keyLabel(k) {
    const low = k.toLowerCase();
    if (KEY_NAMES[low]) return KEY_NAMES[low];
    if (/^f\d+$/.test(low)) return low.toUpperCase();
    if (low.length === 1) return low.toUpperCase();
    return k;
  }

  function kbd(k) {
    const low = k.toLowerCase();
    const cls = 'kbd' + (DANGER_KEYS.has(low) ? ' kbd-danger' : MODIFIERS.has(low) ? ' kbd-mod' : '');
    return el('kbd', cls, keyLabel(k));
  }

  function point(x, y) {
    return (x === undefined || x === null) ? null : '(' + Math.round(x) + ', ' + Math.round(y) + ')';
  }

  // What an action does, as the server's tool described it (the `description` of
  // its event or answer): a title, the keys it presses, its text (redacted as the
  // server redacts it), where and in which window, and the canvas points to mark.
  // Without one (an older server, a finished action whose start was missed), the
  // tool's name alone.
  function described(d, tool) {
    const x = d && typeof d === 'object' ? d : {};
    return {
      title: typeof x.title === 'string' && x.title ? x.title : String(tool || 'action'),
      keys: Array.isArray(x.keys) ? x.keys.map(String) : [],
      text: typeof x.text === 'string' ? x.text : null,
      detail: x.detail || null,
      effect: x.effect || null,
      element: x.element || null,
      window: x.window || null,
      marks: Array.isArray(x.marks) ? x.marks.filter((m) => m && typeof m === 'object') : [],
      items: Array.isArray(x.items) ? x.items.map((it) => described(it, null)) : [],
    };
  }

  // ---------------------------------------------------------------- pending cards

  function deadlineFrom(expiresAt, timeoutS, at) {
    // The server's clock may differ from ours: count from the event's own timestamps
    // when both are known, so only the elapsed time since the event matters.
    const exp = Date.parse(expiresAt);
    const emitted = Date.parse(at);
    if (!isNaN(exp) && !isNaN(emitted)) {
      const age = Math.max(0, Date.now() - emitted);
      return performance.now() + (exp - emitted) - Math.min(age, exp - emitted);
    }
    return performance.now() + 1000 * (timeoutS || 30);
  }

  function addPending(p) {
    if (!p.request_id || app.pending.has(p.request_id)) return;
    p.addedAt = performance.now();
    p.card = renderCard(p);
    app.pending.set(p.request_id, p);
    $('cards').prepend(p.card);
    updateCounts();
    renderMarkers();
    markLinked();
    tick();
  }

  function removePending(id, outcome) {
    const p = app.pending.get(id);
    if (!p) return;
    app.pending.delete(id);
    if (outcome && p.card) {
      p.card.classList.add('card-gone', 'card-' + outcome);
      p.card.querySelector('.card-outcome').textContent =
        {approved: 'Approved: running now', denied: 'Denied', expired: 'Expired: denied automatically', cancelled: 'Cancelled'}[outcome] || outcome;
      for (const b of p.card.querySelectorAll('button')) b.disabled = true;
      setTimeout(() => p.card.remove(), 2000);
    } else if (p.card) {
      p.card.remove();
    }
    updateCounts();
    renderMarkers();
  }

  function renderCard(p) {
    const d = described(p.description, p.tool);
    const card = el('article', 'card risk-' + (p.risk || 'unknown'));
    card.dataset.requestId = p.request_id;
    card.dataset.tool = p.tool;

    const head = el('div', 'card-head');
    head.append(el('span', 'badge badge-' + (p.risk || 'unknown'), (p.risk || '?') + ' risk'));
    head.append(el('code', 'card-tool', p.tool));
    const clock = el('span', 'countdown');
    clock.append(el('span', 'countdown-num', '—'), el('span', 'countdown-unit', 's left'));
    head.append(clock);
    card.append(head);

    const bar = el('div', 'timebar');
    bar.append(el('div', 'timebar-fill'));
    card.append(bar);

    const title = el('h3', 'card-title');
    if (d.keys.length) {
      title.append(el('span', 'verb', 'Press'));
      d.keys.forEach((k, i) => {
        if (i) title.append(el('span', 'plus', '+'));
        title.append(kbd(k));
      });
    } else {
      title.textContent = d.title;
    }
    card.append(title);

    if (d.text !== null) {
      const box = el('div', 'typed');
      box.append(el('div', 'typed-label', 'Text (' + d.text.length + ' chars)'));
      box.append(el('pre', 'typed-text', d.text === '' ? '(empty)' : d.text));
      card.append(box);
    }
    if (d.items.length) {
      const ol = el('ol', 'batch-list');
      for (const b of d.items) ol.append(el('li', null, b.title + (b.text ? ': “' + clip(b.text, 80) + '”' : '')));
      card.append(ol);
    }

    const facts = el('dl', 'card-facts');
    const fact = (k, v) => { if (v) { facts.append(el('dt', null, k), el('dd', null, v)); } };
    fact('Effect', d.effect);
    fact('Element', d.element);
    fact('Window', d.window);
    fact('Where', [d.detail, d.marks.length ? 'marked on the screen below' : null].filter(Boolean).join('; ') || null);
    fact('Reason', p.reason);
    card.append(facts);

    const raw = el('details', 'raw');
    raw.append(el('summary', null, 'Arguments'));
    raw.append(el('pre', 'raw-json', JSON.stringify(p.arguments ?? {}, null, 2)));
    card.append(raw);

    const actions = el('div', 'card-actions');
    const approve = el('button', 'btn btn-approve', 'Approve');
    approve.type = 'button';
    const deny = el('button', 'btn btn-deny', 'Deny');
    deny.type = 'button';
    if (app.role !== 'operator') {
      approve.disabled = deny.disabled = true;
      approve.title = deny.title = 'Needs the operator token';
    }
    approve.addEventListener('click', () => decide(p, true, approve, deny));
    deny.addEventListener('click', () => decide(p, false, approve, deny));
    actions.append(approve, deny, el('span', 'card-outcome', ''));
    card.append(actions);
    return card;
  }

  async function decide(p, approve, ...buttons) {
    for (const b of buttons) b.disabled = true;
    const outcome = p.card.querySelector('.card-outcome');
    outcome.textContent = approve ? 'Approving…' : 'Denying…';
    try {
      const env = await rpc('session.confirm', {request_id: p.request_id, approve});
      if (env.ok) {
        removePending(p.request_id, approve ? 'approved' : 'denied');
      } else {
        outcome.textContent = env.error.message;
        toast(env.error.message, 'error');
        if (env.error.code === 'confirmation_expired' || env.error.code === 'confirmation_not_found') {
          removePending(p.request_id, env.error.code === 'confirmation_expired' ? 'expired' : 'cancelled');
        }
      }
    } catch (e) {
      outcome.textContent = e.message;
      for (const b of buttons) b.disabled = false;
    }
    scheduleStatus();
  }

  function tick() {
    const now = performance.now();
    for (const p of app.pending.values()) {
      const left = Math.max(0, (p.deadline - now) / 1000);
      const total = p.timeout_s || 30;
      const num = p.card.querySelector('.countdown-num');
      num.textContent = left >= 10 ? String(Math.ceil(left)) : left.toFixed(1);
      p.card.classList.toggle('urgent', left < 10);
      p.card.querySelector('.timebar-fill').style.width = Math.min(100, (100 * left) / total) + '%';
    }
  }

  // ---------------------------------------------------------------- governed approvals
  //
  // Governed actions (MCP preview_action / execute_action) whose policy decision is
  // `confirm` wait here (GET /approvals, operator token only). Approving issues a
  // one-time grant for exactly that action (its argsDigest, which the request carries
  // back so a re-previewed action is never approved unseen), valid for the chosen time.

  const GOV_TTLS = [[60, '1 min'], [120, '2 min'], [300, '5 min'], [30, '30 s']];

  function govKey(r) {
    return r.sessionId + '/' + r.actionId;
  }

  async function refreshGoverned() {
    if (!app.running) return;
    if (app.role !== 'operator') {
      $('no-gov').textContent = 'Approving governed actions needs the operator token.';
      return;
    }
    if (app.govLoading) { app.govAgain = true; return; }
    app.govLoading = true;
    try {
      const res = await signedFetch('/approvals', {headers: auth()});
      if (res.status === 401) { showLogin('Your session has ended: sign in again.'); return; }
      if (res.ok) renderGoverned((await res.json()).approvals || []);
    } catch (_) {
      // The next event or poll tries again.
    } finally {
      app.govLoading = false;
      if (app.govAgain) { app.govAgain = false; refreshGoverned(); }
    }
  }

  function renderGoverned(list) {
    const live = new Set(list.map(govKey));
    for (const [k, item] of app.governed) {
      if (!live.has(k) && !item.deciding) { item.card.remove(); app.governed.delete(k); }
    }
    for (const r of list) {
      const k = govKey(r);
      const cur = app.governed.get(k);
      if (cur && (cur.deciding || cur.r.argsDigest === r.argsDigest)) continue;
      if (cur) cur.card.remove();
      const item = {r, card: null, deciding: false};
      item.card = renderGovCard(item);
      app.governed.set(k, item);
      $('gov-cards').prepend(item.card);
    }
    markLinked();
    updateGovCount();
    tickGoverned();
  }

  function renderGovCard(item) {
    const r = item.r;
    const d = described(r.description, r.tool);
    const card = el('article', 'card gov-card');
    card.dataset.sessionId = r.sessionId;
    card.dataset.actionId = r.actionId;

    const head = el('div', 'card-head');
    head.append(el('span', 'badge badge-governed', String(r.actionClass || 'governed').replace(/_/g, ' ')));
    head.append(el('code', 'card-tool', r.tool));
    head.append(el('span', 'gov-expiry', ''));
    card.append(head);
    card.append(el('h3', 'card-title', d.title));
    if (d.text !== null) {
      const box = el('div', 'typed');
      box.append(el('div', 'typed-label', 'Text'));
      box.append(el('pre', 'typed-text', d.text === '' ? '(empty)' : d.text));
      card.append(box);
    }

    const facts = el('dl', 'card-facts');
    const fact = (k, v) => { if (v) { facts.append(el('dt', null, k), el('dd', null, v)); } };
    const t = r.target;
    fact('Target', t ? t.appId + (t.windowTitle ? ' · “' + t.windowTitle + '”' : '') +
      (t.windowId !== undefined ? ' (window ' + t.windowId + ')' : '') + (t.role ? ' · ' + t.role : '') : null);
    fact('Why', Array.isArray(r.reasons) ? r.reasons.join('; ') : null);
    fact('Agent', r.principalId + ' · session ' + r.sessionId + ' · action ' + r.actionId);
    fact('Mode', r.mode);
    fact('Data', Array.isArray(r.dataLabels) && r.dataLabels.length ? r.dataLabels.join(', ') : null);
    card.append(facts);
    card.append(el('div', 'gov-digest', 'argsDigest ' + r.argsDigest));

    const raw = el('details', 'raw');
    raw.append(el('summary', null, 'Arguments'));
    raw.append(el('pre', 'raw-json', JSON.stringify(r.arguments ?? {}, null, 2)));
    card.append(raw);

    const actions = el('div', 'card-actions');
    const approve = el('button', 'btn btn-approve', 'Approve');
    approve.type = 'button';
    const ttl = el('select', 'gov-ttl');
    ttl.title = 'How long the grant stays valid';
    for (const [secs, label] of GOV_TTLS) {
      const o = el('option', null, 'valid ' + label);
      o.value = String(secs);
      ttl.append(o);
    }
    const deny = el('button', 'btn btn-deny', 'Deny');
    deny.type = 'button';
    approve.addEventListener('click', () => decideGoverned(item, true, Number(ttl.value), [approve, deny, ttl]));
    deny.addEventListener('click', () => decideGoverned(item, false, 0, [approve, deny, ttl]));
    actions.append(approve, ttl, deny, el('span', 'card-outcome', ''));
    card.append(actions);
    return card;
  }

  async function decideGoverned(item, approve, ttlS, controls) {
    const r = item.r;
    const outcome = item.card.querySelector('.card-outcome');
    for (const c of controls) c.disabled = true;
    item.deciding = true;
    outcome.textContent = approve ? 'Approving…' : 'Denying…';
    const body = {session_id: r.sessionId, action_id: r.actionId, args_digest: r.argsDigest};
    if (approve) body.ttl_ms = ttlS * 1000;
    try {
      const res = await signedFetch('/approvals/' + (approve ? 'approve' : 'deny'), {
        method: 'POST',
        headers: Object.assign({'Content-Type': 'application/json'}, auth()),
        body: JSON.stringify(body),
        cache: 'no-store',
      });
      const out = await res.json().catch(() => ({}));
      if (res.ok) {
        outcome.textContent = approve
          ? 'Approved: one-time grant, valid ' + ttlS + ' s; the agent may now execute it'
          : 'Denied';
        item.card.classList.add('card-gone', approve ? 'card-approved' : 'card-denied');
        setTimeout(() => {
          item.card.remove();
          app.governed.delete(govKey(r));
          updateGovCount();
        }, 2000);
        return;
      }
      const msg = out.message || ('the server answered ' + res.status);
      outcome.textContent = msg;
      toast(msg, 'error');
      item.deciding = false;
      if (res.status === 404 || res.status === 409 || res.status === 410) {
        app.governed.delete(govKey(r));
        item.card.remove();
        refreshGoverned();
      } else {
        for (const c of controls) c.disabled = false;
      }
    } catch (e) {
      outcome.textContent = e.message;
      item.deciding = false;
      for (const c of controls) c.disabled = false;
    }
    updateGovCount();
  }

  function tickGoverned() {
    const now = Date.now();
    for (const item of app.governed.values()) {
      if (item.deciding) continue;
      const left = (Date.parse(item.r.expiresAt) - now) / 1000;
      const expired = !(left > 0);
      item.card.classList.toggle('gov-expired', expired);
      item.card.querySelector('.gov-expiry').textContent =
        expired ? 'preview expired' : 'preview valid ' + Math.ceil(left) + ' s';
      item.card.querySelector('.btn-approve').disabled = expired;
    }
  }

  function updateGovCount() {
    const n = app.governed.size;
    $('gov-count').textContent = String(n);
    $('gov-count').classList.toggle('count-hot', n > 0);
    $('no-gov').hidden = n > 0;
  }

  // ---------------------------------------------------------------- trail

  function trailAction(ev, p) {
    const d = described(p.description, p.tool);
    const row = el('li', 'row row-running');
    row.dataset.tool = p.tool;
    row.dataset.status = 'running';
    if (p.request_id) row.dataset.requestId = p.request_id;
    row.append(el('time', 'row-time', clock(ev.at)));
    row.append(el('span', 'row-icon', '…'));
    const body = el('div', 'row-body');
    const line = el('div', 'row-title');
    if (d.keys.length) {
      line.append(el('span', null, 'Press '));
      d.keys.forEach((k, i) => { if (i) line.append(el('span', 'plus', '+')); line.append(kbd(k)); });
    } else {
      line.textContent = d.title;
    }
    body.append(line);
    const meta = el('div', 'row-meta');
    meta.append(el('code', null, p.tool));
    if (p.request_id) meta.append(el('span', 'tag tag-approved', 'approved by operator'));
    if (p.grant_id) meta.append(el('span', 'tag tag-granted', 'governed: operator grant'));
    if (d.text) meta.append(el('span', 'row-text', '“' + clip(d.text, 60) + '”'));
    body.append(meta);
    row.append(body);
    row.append(el('span', 'row-result', 'running'));
    pushRow(row, {tool: p.tool, request_id: p.request_id || null, open: true});
  }

  function finishAction(ev, p) {
    // Actions run one at a time: the open row of the same tool is this one.
    let item = null;
    for (let i = app.trail.length - 1; i >= 0; i--) {
      const t = app.trail[i];
      if (t.open && t.tool === p.tool && (t.request_id || null) === (p.request_id || null)) { item = t; break; }
    }
    if (!item) {
      trailAction(ev, {tool: p.tool, request_id: p.request_id});
      item = app.trail[app.trail.length - 1];
    }
    item.open = false;
    const row = item.row;
    row.classList.remove('row-running');
    row.classList.add(p.ok ? 'row-ok' : 'row-fail');
    row.dataset.status = p.ok ? 'ok' : 'failed';
    row.querySelector('.row-icon').textContent = p.ok ? '✓' : '✕';
    row.querySelector('.row-result').textContent =
      (p.ok ? 'ok' : (p.error_code || 'failed')) + (p.duration_ms !== undefined ? ' · ' + p.duration_ms + ' ms' : '');
    // What a revealing tool read arrives redacted, with its length: say so.
    if (p.result && typeof p.result.text_chars === 'number') {
      const n = p.result.text_chars;
      row.querySelector('.row-body').append(el('div', 'row-meta row-redacted',
        'text redacted · ' + n + ' character' + (n === 1 ? '' : 's')));
    } else if (p.result && p.result.text === null) {
      row.querySelector('.row-body').append(el('div', 'row-meta row-redacted', 'the clipboard was empty'));
    }
  }

  function trailSystem(ev, kind, title, detail) {
    const row = el('li', 'row row-system row-' + kind);
    row.dataset.type = ev.type;
    row.append(el('time', 'row-time', clock(ev.at)));
    row.append(el('span', 'row-icon', {ok: '✓', deny: '✕', stop: '■', confirm: '?', info: '•'}[kind] || '•'));
    const body = el('div', 'row-body');
    body.append(el('div', 'row-title', title));
    if (detail) body.append(el('div', 'row-meta', detail));
    row.append(body);
    pushRow(row, {open: false});
  }

  function pushRow(row, item) {
    item.row = row;
    app.trail.push(item);
    $('trail').prepend(row);
    while (app.trail.length > TRAIL_MAX) {
      const old = app.trail.shift();
      old.row.remove();
    }
    updateCounts();
  }

  // ---------------------------------------------------------------- status, state, frame

  let statusTimer = null;
  function scheduleStatus() {
    if (statusTimer) return;
    statusTimer = setTimeout(() => { statusTimer = null; pollStatus(); }, 60);
  }

  async function pollStatus() {
    let env;
    try { env = await rpc('system.status'); } catch (_) { return; }
    if (!env || !env.ok) return;
    const s = env.result;
    app.status = s;
    setState(s.state);
    const facts = [];
    if (s.platform) facts.push(s.platform);
    facts.push(s.action_count + ' action' + (s.action_count === 1 ? '' : 's'));
    if (s.surface) facts.push(s.surface.display_width_px + '×' + s.surface.display_height_px + ' canvas');
    $('facts').textContent = facts.join(' · ');
    // The status is the authority on what is pending (events may have been missed).
    const pc = s.pending_confirmation;
    for (const [id, p] of [...app.pending.entries()]) {
      // A poll answered just before the request was made must not remove its card.
      const settled = performance.now() - p.addedAt > 1500;
      if (settled && (!pc || pc.request_id !== id)) removePending(id, null);
    }
    if (pc && !app.pending.has(pc.request_id)) {
      addPending({
        request_id: pc.request_id, tool: pc.tool, arguments: pc.arguments, risk: pc.risk,
        reason: pc.reason, timeout_s: null, description: pc.description,
        deadline: performance.now() + 1000 * (pc.expires_in_s || 0),
      });
    } else if (pc) {
      // Re-anchor the countdown on the server's own remaining time.
      app.pending.get(pc.request_id).deadline = performance.now() + 1000 * (pc.expires_in_s || 0);
    }
    if (s.frame && s.frame !== app.frame.number) refreshFrame();
  }

  function setState(state) {
    app.state = state || 'unknown';
    const pill = $('state');
    pill.dataset.state = app.state;
    pill.className = 'state state-' + app.state;
    pill.textContent = {
      idle: 'No session', ready: 'Ready', confirming: 'Waiting for you', stopped: 'Stopped',
      standby: 'Standby', unknown: '—',
    }[app.state] || app.state;
    document.body.dataset.state = app.state;
    $('stopped-banner').hidden = app.state !== 'stopped';
    $('panic').disabled = !(app.state === 'ready' || app.state === 'confirming' || app.state === 'standby');
    $('resume').disabled = !(app.role === 'operator' && (app.state === 'stopped' || app.state === 'standby'));
  }

  let frameBusy = false;
  async function refreshFrame() {
    if (frameBusy) return;
    frameBusy = true;
    try {
      const headers = auth();
      if (app.frame.etag) headers['If-None-Match'] = app.frame.etag;
      const res = await signedFetch('/frame', {headers});
      if (res.status === 200) {
        const blob = await res.blob();
        const url = URL.createObjectURL(blob);
        const img = $('frame');
        img.onload = () => { renderMarkers(); };
        img.src = url;
        if (app.frame.url) URL.revokeObjectURL(app.frame.url);
        app.frame.url = url;
        app.frame.etag = res.headers.get('ETag');
        app.frame.number = Number(res.headers.get('X-Frame') || 0);
        const r = (res.headers.get('X-Frame-Region') || '').split(',').map(Number);
        app.frame.region = r.length === 4 ? {x: r[0], y: r[1], width: r[2], height: r[3]} : null;
        app.frame.size = res.headers.get('X-Frame-Size');
        app.frame.at = new Date();
        img.hidden = false;
        $('no-frame').hidden = true;
        updateFrameCaption();
      }
    } catch (_) {
      // The next status poll tries again.
    } finally {
      frameBusy = false;
    }
  }

  function updateFrameCaption() {
    if (!app.frame.number) return;
    const r = app.frame.region;
    const parts = ['frame #' + app.frame.number];
    if (app.frame.size) parts.push(app.frame.size.replace('x', '×') + ' px');
    if (r) parts.push('canvas region ' + r.x + ',' + r.y + ' ' + r.width + '×' + r.height);
    if (app.frame.at) parts.push('received ' + app.frame.at.toLocaleTimeString([], {hour12: false}));
    $('frame-caption').textContent = parts.join(' · ');
  }

  // Marks, on the latest frame, where each pending pointer action would land.
  function renderMarkers() {
    const box = $('markers');
    box.textContent = '';
    const img = $('frame');
    const r = app.frame.region;
    if (img.hidden || !r || !img.clientWidth) return;
    for (const p of app.pending.values()) {
      const d = described(p.description, p.tool);
      for (const pt of d.marks) {
        if (pt.x === undefined || pt.x === null) continue;
        const fx = (pt.x - r.x) / r.width, fy = (pt.y - r.y) / r.height;
        if (fx < 0 || fy < 0 || fx > 1 || fy > 1) continue;
        const m = el('div', 'marker');
        m.style.left = (img.offsetLeft + fx * img.clientWidth) + 'px';
        m.style.top = (img.offsetTop + fy * img.clientHeight) + 'px';
        m.append(el('span', 'marker-label', pt.label + ' ' + point(pt.x, pt.y)));
        box.append(m);
      }
    }
  }

  // ---------------------------------------------------------------- helpers

  function updateCounts() {
    $('pending-count').textContent = String(app.pending.size);
    $('pending-count').classList.toggle('count-hot', app.pending.size > 0);
    $('no-pending').hidden = app.pending.size > 0;
    $('trail-count').textContent = String(app.trail.length);
    $('no-trail').hidden = app.trail.length > 0;
    document.title = (app.pending.size ? '(' + app.pending.size + ') ' : '') + 'computer-control · operator console';
  }

  function setLink(up) {
    const l = $('link');
    l.className = 'link ' + (up ? 'link-up' : 'link-down');
    l.textContent = up ? '● live' : '○ reconnecting…';
  }

  function surfaceText(s) {
    return s ? s.display_width_px + '×' + s.display_height_px : '';
  }

  function clock(at) {
    const t = new Date(at);
    return isNaN(t) ? '' : t.toLocaleTimeString([], {hour12: false});
  }

  function clip(s, n) {
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }

  function sleep(ms) {
    return new Promise((r) => setTimeout(r, ms));
  }

  function banner(text, kind) {
    const b = $('banner');
    b.textContent = text;
    b.className = 'banner banner-' + (kind || 'info');
    b.hidden = false;
  }

  function toast(text, kind) {
    const t = el('div', 'toast toast-' + (kind || 'info'), text);
    $('toasts').append(t);
    setTimeout(() => t.remove(), 5000);
  }

  // ---------------------------------------------------------------- wiring

  function start() {
    if (app.running) return;
    app.running = true;
    setState('unknown');
    pollStatus();
    streamEvents();
    refreshGoverned();
  }

  setInterval(() => { if (app.running) pollStatus(); }, STATUS_EVERY_MS);
  setInterval(tick, 200);
  setInterval(tickGoverned, 1000);
  // Expired previews leave the list without an event.
  setInterval(refreshGoverned, 5000);
  window.addEventListener('resize', renderMarkers);

  $('panic').addEventListener('click', async () => {
    $('panic').disabled = true;
    try {
      const env = await rpc('control.panic', {on: true});
      if (!env.ok) toast(env.error.message, 'error');
    } catch (e) {
      toast('Emergency stop failed: ' + e.message, 'error');
    }
    pollStatus();
  });

  $('resume').addEventListener('click', async () => {
    $('resume').disabled = true;
    try {
      const env = await rpc('session.resume');
      if (!env.ok) toast(env.error.message, 'error');
      else if (env.result.state === 'stopped') toast('Still stopped: the panic file exists.', 'error');
    } catch (e) {
      toast('Resume failed: ' + e.message, 'error');
    }
    pollStatus();
  });

  $('logout').addEventListener('click', async () => {
    app.running = false;
    if (app.streamAbort) app.streamAbort.abort();
    // Aborted for good (the page reloads below): a status poll or frame a timer
    // starts after this is refused in the page instead of reaching the server.
    inflight.abort();
    try {
      await fetch('/console/logout', {method: 'POST', headers: auth(), cache: 'no-store'});
    } catch (_) {
      // Signed out here either way; the server ends an unused session by itself.
    }
    forget();
    location.reload();
  });

  $('login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const t = $('token').value.trim();
    $('token').value = ''; // the token is posted once and kept nowhere
    if (t) signIn(t);
  });

  // An older console kept the token itself in the tab: it has no use any more.
  sessionStorage.removeItem('cc-operator-token');
  app.key = sessionStorage.getItem(KEY_KEY);
  if (dropTokenFromAddress()) {
    forget();
    showLogin('Tokens in the address are no longer accepted (they stay in the browser history): sign in here.');
  } else if (app.key) {
    enter();
  } else {
    showLogin('');
  }
})();
