// The fleet console: one page over every desk of the plane. It signs in as a desk's
// console does (the operator token posted once to /console/login; then an HttpOnly
// cookie plus a per-tab key in sessionStorage, sent as X-Console-Key), polls /fleet,
// and sends every decision to the plane, which forwards it to that desk's operator
// channel.
'use strict';
(() => {
  const KEY_KEY = 'cc-fleet-key';
  const $ = (id) => document.getElementById(id);
  const app = {key: sessionStorage.getItem(KEY_KEY), timer: null, frames: {}, frameAt: {}};

  function auth(extra) {
    return Object.assign({'X-Console-Key': app.key || ''}, extra || {});
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function banner(text, kind) {
    const b = $('banner');
    b.hidden = !text;
    b.textContent = text || '';
    b.className = 'banner banner-' + (kind || 'info');
  }

  function showLogin(message) {
    clearInterval(app.timer);
    $('app').hidden = true;
    $('login').hidden = false;
    $('logout').hidden = true;
    $('stop-all').disabled = true;
    $('verify').disabled = true;
    $('login-error').textContent = message || '';
  }

  async function signIn(token) {
    let res;
    try {
      res = await fetch('/console/login', {method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({token}), cache: 'no-store'});
    } catch (e) {
      showLogin('The plane cannot be reached: ' + e.message);
      return;
    }
    const out = await res.json().catch(() => ({}));
    if (!res.ok || !out.key) {
      showLogin(out.message || ('The plane answered ' + res.status + '.'));
      return;
    }
    app.key = out.key;
    sessionStorage.setItem(KEY_KEY, out.key);
    enter();
  }

  async function enter() {
    const res = await fetch('/whoami', {headers: auth(), cache: 'no-store'}).catch(() => null);
    if (!res || !res.ok) {
      app.key = null;
      sessionStorage.removeItem(KEY_KEY);
      showLogin(res ? 'Your session has ended: sign in again.' : 'The plane cannot be reached.');
      return;
    }
    $('login').hidden = true;
    $('app').hidden = false;
    $('logout').hidden = false;
    $('stop-all').disabled = false;
    $('verify').disabled = false;
    const role = $('role');
    role.hidden = false;
    role.textContent = 'operator';
    role.className = 'role role-operator';
    refresh();
    app.timer = setInterval(refresh, 1000);
  }

  async function post(path, body) {
    const res = await fetch(path, {method: 'POST', headers: auth({'Content-Type': 'application/json'}),
      body: JSON.stringify(body || {}), cache: 'no-store'});
    if (res.status === 401) {
      showLogin('Your session has ended: sign in again.');
      return null;
    }
    return res.json().catch(() => ({}));
  }

  function healthText(d) {
    if (!d.reachable) return 'unreachable';
    if (d.healthy) return 'healthy';
    const parts = ['display', 'driver', 'journal']
      .filter((p) => d.health && d.health[p] && d.health[p].ready === false)
      .map((p) => p + ': ' + (d.health[p].detail || 'not ready'));
    return 'unhealthy' + (parts.length ? ' (' + parts.join('; ') + ')' : '');
  }

  function decisionButtons(desk, body, label) {
    const row = el('div', 'card-actions');
    const yes = el('button', 'btn btn-approve', 'Approve');
    const no = el('button', 'btn btn-deny', 'Deny');
    yes.type = no.type = 'button';
    yes.dataset.desk = no.dataset.desk = desk;
    yes.setAttribute('aria-label', 'Approve ' + label + ' on ' + desk);
    no.setAttribute('aria-label', 'Deny ' + label + ' on ' + desk);
    const send = async (approve) => {
      yes.disabled = no.disabled = true;
      const out = await post('/fleet/' + (approve ? 'approve' : 'deny'), Object.assign({desk}, body));
      if (out && out.error) banner(desk + ': ' + out.message, 'warn');
      refresh();
    };
    yes.addEventListener('click', () => send(true));
    no.addEventListener('click', () => send(false));
    row.append(yes, no);
    return row;
  }

  function deskCard(d) {
    const card = el('article', 'card desk');
    card.dataset.desk = d.name;
    const state = (d.status && d.status.state) || 'unknown';
    card.dataset.state = state;
    card.dataset.health = d.reachable ? (d.healthy ? 'healthy' : 'unhealthy') : 'unreachable';
    const head = el('div', 'card-head');
    head.append(el('strong', 'card-title', d.name));
    const badge = el('span', 'state state-' + (d.reachable && d.healthy ? state : 'stopped'), d.reachable ? state : '—');
    head.append(badge);
    card.append(head);
    const facts = el('p', 'card-tool health', healthText(d));
    card.append(facts);
    if (d.error) card.append(el('p', 'login-error', d.error));
    const held = d.status && d.status.held;
    if (held && (held.keys.length || held.buttons.length)) {
      card.append(el('p', 'card-tool', 'held: ' + held.keys.concat(held.buttons).join(', ')));
    }
    const pending = d.status && d.status.pending_confirmation;
    if (pending) {
      const c = el('div', 'card risk-high pending');
      c.append(el('p', 'card-tool', 'waits for you: ' + pending.tool + ' ' + JSON.stringify(pending.arguments)));
      c.append(decisionButtons(d.name, {request_id: pending.request_id}, pending.tool));
      card.append(c);
    }
    for (const a of d.approvals || []) {
      const c = el('div', 'card risk-high governed');
      const tool = a.tool || (a.preview && a.preview.envelope && a.preview.envelope.tool) || 'governed action';
      c.append(el('p', 'card-tool', 'governed: ' + tool + ' (' + a.sessionId + '/' + a.actionId + ')'));
      c.append(decisionButtons(d.name, {session_id: a.sessionId, action_id: a.actionId, args_digest: a.argsDigest}, tool));
      card.append(c);
    }
    if (state === 'stopped' && d.reachable) {
      const r = el('button', 'btn btn-resume', '▶ Resume');
      r.type = 'button';
      r.setAttribute('aria-label', 'Resume ' + d.name);
      r.addEventListener('click', async () => { await post('/fleet/resume', {desk: d.name}); refresh(); });
      card.append(r);
    }
    const trail = el('ol', 'trail');
    for (const e of (d.recent || []).slice(-6).reverse()) {
      const p = e.payload || {};
      trail.append(el('li', '', e.type + (p.tool ? ' ' + p.tool : '') + (p.error ? ' ' + (p.error.code || '') : '')));
    }
    card.append(trail);
    const img = el('img', 'desk-frame');
    img.alt = 'latest capture of ' + d.name;
    img.hidden = true;
    card.append(img);
    if (app.frames[d.name]) {
      img.src = app.frames[d.name];
      img.hidden = false;
    }
    // A capture is fetched at most every 3 s per desk; the card shows the last one.
    if (d.reachable && !(Date.now() - (app.frameAt[d.name] || 0) < 3000)) {
      app.frameAt[d.name] = Date.now();
      loadFrame(d.name, img);
    }
    return card;
  }

  async function loadFrame(name, img) {
    const res = await fetch('/fleet/frame/' + encodeURIComponent(name), {headers: auth(), cache: 'no-store'}).catch(() => null);
    if (!res || res.status !== 200) return;
    const blob = await res.blob();
    if (app.frames[name]) URL.revokeObjectURL(app.frames[name]);
    app.frames[name] = URL.createObjectURL(blob);
    img.src = app.frames[name];
    img.hidden = false;
  }

  async function refresh() {
    const res = await fetch('/fleet', {headers: auth(), cache: 'no-store'}).catch(() => null);
    if (!res) { banner('The plane cannot be reached.', 'warn'); return; }
    if (res.status === 401) { showLogin('Your session has ended: sign in again.'); return; }
    const fleet = await res.json();
    const list = $('desks');
    list.replaceChildren(...fleet.desks.map(deskCard));
    $('no-desks').hidden = fleet.desks.length > 0;
    const healthy = fleet.desks.filter((d) => d.reachable && d.healthy).length;
    const waiting = fleet.desks.reduce((n, d) => n + (d.approvals || []).length + (d.status && d.status.pending_confirmation ? 1 : 0), 0);
    $('summary').textContent = fleet.desks.length + ' desks · ' + healthy + ' healthy · ' + waiting + ' waiting for you';
    if (fleet.discovery_errors.length) banner('discovery: ' + fleet.discovery_errors.join('; '), 'warn');
  }

  $('stop-all').addEventListener('click', async () => {
    const out = await post('/fleet/stop-all');
    if (!out) return;
    banner(out.all_stopped ? 'Every desk is stopped with nothing held.'
      : 'Not every desk confirmed the stop: ' + out.desks.filter((d) => !d.stopped).map((d) => d.desk + ': ' + d.error).join('; '),
    out.all_stopped ? 'stop' : 'warn');
    refresh();
  });

  $('verify').addEventListener('click', async () => {
    const res = await fetch('/fleet/journals', {headers: auth(), cache: 'no-store'});
    const out = await res.json();
    $('journal-verdict').textContent = out.all_verified ? 'all verified' : 'NOT verified';
    $('journal-verdict').className = 'count' + (out.all_verified ? '' : ' count-hot');
    $('journals').replaceChildren(...out.desks.map((d) => el('li', d.verified ? '' : 'login-error',
      d.desk + ': ' + (d.error ? d.error : d.sessions.length + ' sessions, ' +
        d.sessions.reduce((n, s) => n + s.events, 0) + ' events, ' + (d.verified ? 'chains verified' : 'chain broken')))));
  });

  $('logout').addEventListener('click', async () => {
    await fetch('/console/logout', {method: 'POST', headers: auth(), cache: 'no-store'}).catch(() => null);
    app.key = null;
    sessionStorage.removeItem(KEY_KEY);
    showLogin('Signed out.');
  });

  $('login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const t = $('token');
    const token = t.value;
    t.value = '';
    signIn(token);
  });

  if (app.key) enter(); else showLogin('');
})();
