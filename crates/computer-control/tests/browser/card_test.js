// The operator console's confirmation cards in Debian's chromium: for every way an
// agent can aim a pointer or name an element, and for keyboard tools, the card says
// what will run where (element role and name, window title) in the words the tool
// wrote (`description` of the event), is the one an MCP host's
// approval link (`#approval=<request id>`) marks, and marks the point on the
// screen where the gate placed it. Run by tests/http_browser.rs against a live server
// on the virtual desktop whose rules ask for confirmation of every acting tool; prints
// one JSON result line last: {ok, cases:[{request_id, tool, landing}]} (the landing
// each case expected, which the caller compares with the events).
//
// Env: CC_BASE, CC_AGENT_TOKEN, CC_OPERATOR_TOKEN, CC_SCREENSHOTS, CHROMIUM.
'use strict';

const fs = require('fs');
const path = require('path');
const {fail, launch, finish, run} = require('./harness');

const BASE = process.env.CC_BASE;
const AGENT = process.env.CC_AGENT_TOKEN;
const OPERATOR = process.env.CC_OPERATOR_TOKEN;
const SHOTS = process.env.CC_SCREENSHOTS;
const T = 20000;

async function rpc(token, method, params) {
  const res = await fetch(BASE + '/rpc', {
    method: 'POST',
    headers: {Authorization: 'Bearer ' + token, 'Content-Type': 'application/json'},
    body: JSON.stringify({jsonrpc: '2.0', id: 1, method, params: params || {}}),
  });
  const body = await res.json();
  if (!body.result) fail(method + ': ' + JSON.stringify(body));
  return body.result;
}

async function tool(name, args) {
  const env = await rpc(AGENT, 'tools.call', {tool: name, arguments: args});
  if (!env.ok) fail(name + ' ' + JSON.stringify(args) + ': ' + JSON.stringify(env.error));
  return env.result;
}

// Keys sorted at every depth, so two landings compare by content.
function canon(v) {
  if (Array.isArray(v)) return v.map(canon);
  if (v && typeof v === 'object') {
    const out = {};
    for (const k of Object.keys(v).sort()) out[k] = canon(v[k]);
    return out;
  }
  return v;
}

function same(a, b) {
  return JSON.stringify(canon(a)) === JSON.stringify(canon(b));
}

function findNode(n, role, name) {
  if (n.role === role && n.name === name) return n;
  for (const c of n.children || []) {
    const f = findNode(c, role, name);
    if (f) return f;
  }
  return null;
}

async function main() {
  if (!BASE || !AGENT || !OPERATOR || !SHOTS) fail('CC_BASE, CC_AGENT_TOKEN, CC_OPERATOR_TOKEN, CC_SCREENSHOTS are required');
  fs.mkdirSync(SHOTS, {recursive: true});

  // The desktop as the agent sees it: windows, elements, the pointer.
  const windows = (await tool('window.list', {})).windows;
  const byApp = (app) => windows.find((w) => w.app_id === app) || fail('no window ' + app + ': ' + JSON.stringify(windows));
  const shownWindow = (w) => ({id: w.id, title: w.title, app_id: w.app_id});
  const under = (x, y) => windows.find((w) => x >= w.rect.x && y >= w.rect.y && x < w.rect.x + w.rect.width && y < w.rect.y + w.rect.height);
  const form = byApp('cc-form');
  const list = windows.find((w) => w.id !== form.id && under(w.rect.x + 5, w.rect.y + 5) === w && w.title === 'Items') || fail('no Items window');
  const focused = windows.find((w) => w.focused) || fail('no focused window');
  const snap = await tool('a11y.snapshot', {level: 'full'});
  const roots = [].concat(snap.tree || [], (snap.windows || []).map((w) => w.tree));
  const node = (role, name) => {
    for (const root of roots) {
      const n = findNode(root, role, name);
      if (n) return n;
    }
    return fail('no ' + role + ' ' + name);
  };
  const centre = (n) => ({x: n.rect[0] + Math.floor((n.rect[2] - n.rect[0]) / 2), y: n.rect[1] + Math.floor((n.rect[3] - n.rect[1]) / 2)});
  const element = (n) => ({role: n.role, name: n.name, ref: n.ref});
  // Where a pointer aimed at this element lands.
  const aimed = (n) => {
    const c = centre(n);
    return {x: c.x, y: c.y, element: element(n), window: shownWindow(under(c.x, c.y))};
  };
  const at = (x, y) => ({x, y, window: shownWindow(under(x, y))});
  const submit = node('button', 'Submit');
  const clear = node('button', 'Clear');
  const remember = node('checkbox', 'Remember me');
  const name = node('edit', 'Name');
  const item2 = node('listitem', 'Item 2');
  const item3 = node('listitem', 'Item 3');
  const items = node('list', 'Items');

  const browser = await launch('cc-cards-chromium-');
  const {context} = browser;
  const result = {ok: false, steps: [], cases: []};
  const step = (s) => { result.steps.push(s); process.stderr.write('step: ' + s + '\n'); };
  const pageErrors = [];
  try {
    const page = context.pages()[0] || await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
    await page.goto(BASE + '/');
    await page.waitForSelector('#login:not([hidden])', {timeout: T});
    await page.fill('#token', OPERATOR);
    await page.click('#login-form button[type="submit"]');
    await page.waitForSelector('#state[data-state="ready"]', {timeout: T});
    await page.waitForSelector('#frame:not([hidden])', {timeout: T});
    step('console open with the live screen');

    // One case: the agent's call waits for a person; the card says `words`, its
    // landing (system.status, the card's source after a reconnect) is `landing`, each
    // landing point is marked where it is on the frame; then the operator decides.
    let n = 0;
    const check = async (name, args, landing, words, approve) => {
      n += 1;
      const asked = await rpc(AGENT, 'tools.call', {tool: name, arguments: args});
      if (!asked.ok || asked.result.status !== 'awaiting_confirmation') fail(name + ' did not wait: ' + JSON.stringify(asked));
      const id = asked.result.request_id;
      const card = `.card[data-request-id="${id}"]`;
      await page.waitForSelector(card, {timeout: T});
      // An MCP host's approval link (`#approval=<id>`) marks this card and no other;
      // it grants nothing (the page is signed in through the form above).
      await page.evaluate((h) => { location.hash = h; }, 'approval=' + encodeURIComponent(id));
      await page.waitForSelector(`${card}.card-linked`, {timeout: T});
      if (await page.$$eval('.card-linked', (cs) => cs.length) !== 1) fail(name + ': not exactly one linked card');
      const status = await rpc(OPERATOR, 'system.status', {});
      const pending = status.result.pending_confirmation;
      if (!pending || pending.request_id !== id) fail('status: ' + JSON.stringify(status));
      if (!same(pending.landing, landing)) {
        fail(`${name} ${JSON.stringify(args)}: landing ${JSON.stringify(pending.landing)}, expected ${JSON.stringify(landing)}`);
      }
      const text = await page.textContent(card);
      for (const w of words) if (!text.includes(w)) fail(`${name} card lacks "${w}": ${text}`);
      if (/undefined|NaN/.test(text)) fail(`${name} card says undefined: ${text}`);
      // Each point, marked where it is on the frame.
      const points = landing.points || [];
      const marks = await page.evaluate(() => {
        const img = document.getElementById('frame');
        const box = img.getBoundingClientRect();
        return {
          img: {x: box.left, y: box.top, width: box.width, height: box.height},
          marks: [...document.querySelectorAll('#markers .marker')].map((m) => {
            const r = m.getBoundingClientRect();
            return {x: r.left + r.width / 2, y: r.top + r.height / 2, label: m.textContent};
          }),
        };
      });
      if (marks.marks.length !== points.length) fail(`${name}: ${marks.marks.length} markers for ${points.length} points: ${JSON.stringify(marks)}`);
      const region = await page.evaluate(() => document.getElementById('frame-caption').textContent);
      points.forEach((p, i) => {
        const m = marks.marks[i];
        if (!m.label.includes('(' + p.x + ', ' + p.y + ')')) fail(`${name}: marker ${i} says ${m.label}, expected (${p.x}, ${p.y})`);
        const want = {x: marks.img.x + (p.x / 1920) * marks.img.width, y: marks.img.y + (p.y / 1080) * marks.img.height};
        if (Math.abs(m.x - want.x) > 2 || Math.abs(m.y - want.y) > 2) {
          fail(`${name}: marker ${i} at ${m.x},${m.y}, expected ${want.x},${want.y} (${region})`);
        }
      });
      await page.screenshot({path: path.join(SHOTS, `card-${String(n).padStart(2, '0')}-${name}.png`)});
      await page.click(card + (approve ? ' .btn-approve' : ' .btn-deny'));
      await page.waitForSelector(card, {state: 'detached', timeout: T});
      if (approve) {
        await page.waitForSelector(`li.row[data-request-id="${id}"][data-status="ok"]`, {timeout: T});
      }
      result.cases.push({request_id: id, tool: name, landing});
      step(`${name} ${JSON.stringify(args)}: card and markers right`);
    };
    const formTitle = '“' + form.title + '”';
    const listTitle = '“' + list.title + '”';

    // Pointer tools at canvas points.
    const p = centre(submit);
    await check('pointer.click', {x: p.x, y: p.y},
      {points: [at(p.x, p.y)], window: shownWindow(form)}, ['Click at (' + p.x + ', ' + p.y + ')', formTitle]);
    // Relative to a window: placed where the window is.
    const rel = {x: 30, y: 60};
    const rp = {x: form.rect.x + rel.x, y: form.rect.y + rel.y};
    await check('pointer.click', {x: rel.x, y: rel.y, window: form.id, button: 'right'},
      {points: [at(rp.x, rp.y)], window: shownWindow(form)},
      ['Click (right button) at (' + rp.x + ', ' + rp.y + ')', 'given as (30, 60) relative to window ' + form.id, formTitle]);
    // Aimed at elements, by ref and by selector.
    await check('pointer.click', {element: {ref: submit.ref}, times: 2},
      {points: [aimed(submit)], window: shownWindow(form)}, ['Double-click on button “Submit” at', formTitle]);
    const m3 = aimed(item3);
    await check('pointer.move', {element: {selector: {role: 'listitem', name: 'Item 3'}}},
      {points: [m3], window: shownWindow(list)}, ['Move the pointer to listitem “Item 3” at (' + m3.x + ', ' + m3.y + ')', listTitle], true);
    // Where the pointer is (on Item 3, where the approved move put it).
    await check('pointer.click', {},
      {points: [Object.assign({here: true}, at(m3.x, m3.y))], window: shownWindow(list)},
      ['Click where the pointer is, at (' + m3.x + ', ' + m3.y + ')', listTitle]);
    await check('pointer.move', {x: 700, y: 200},
      {points: [at(700, 200)], window: shownWindow(form)}, ['Move the pointer to (700, 200)']);
    const mr = {x: list.rect.x + 40, y: list.rect.y + 100};
    await check('pointer.move', {x: 40, y: 100, window: list.id},
      {points: [at(mr.x, mr.y)], window: shownWindow(list)},
      ['Move the pointer to (' + mr.x + ', ' + mr.y + ')', 'given as (40, 100) relative to window ' + list.id]);
    // A drag between two elements, and one relative to a window.
    await check('pointer.drag', {from_element: {ref: item2.ref}, to_element: {selector: {role: 'button', name: 'Clear'}}},
      {points: [aimed(item2), aimed(clear)], window: shownWindow(list)},
      ['Drag from listitem “Item 2” at', 'to button “Clear” at', 'ends in ' + formTitle]);
    const d0 = {x: list.rect.x + 20, y: list.rect.y + 80};
    const d1 = {x: list.rect.x + 20, y: list.rect.y + 200};
    await check('pointer.drag', {from: {x: 20, y: 80}, to: {x: 20, y: 200}, window: list.id},
      {points: [at(d0.x, d0.y), at(d1.x, d1.y)], window: shownWindow(list)},
      ['Drag from (' + d0.x + ', ' + d0.y + ') to (' + d1.x + ', ' + d1.y + ')']);
    // Scrolling at a point and over an element.
    await check('pointer.scroll', {x: m3.x, y: m3.y, amount: -3},
      {points: [at(m3.x, m3.y)], window: shownWindow(list)}, ['Scroll down 3 notches at (' + m3.x + ', ' + m3.y + ')']);
    await check('pointer.scroll', {x: 40, y: 100, window: list.id, amount: 1},
      {points: [at(mr.x, mr.y)], window: shownWindow(list)},
      ['Scroll up 1 notch at (' + mr.x + ', ' + mr.y + ')', 'given as (40, 100) relative to window ' + list.id]);
    await check('pointer.scroll', {element: {ref: items.ref}, amount: 2},
      {points: [aimed(items)], window: shownWindow(list)}, ['Scroll up 2 notches over list “Items” at']);
    // Accessibility tools by ref and by selector: the element, its window, its centre.
    const onForm = (n) => ({points: [centre(n)], element: element(n), window: shownWindow(form)});
    await check('a11y.activate', {ref: remember.ref},
      onForm(remember), ['Activate checkbox “Remember me”', formTitle]);
    await check('a11y.activate', {selector: {role: 'button', name: 'Clear'}},
      onForm(clear), ['Activate button “Clear”', formTitle]);
    await check('a11y.input', {ref: name.ref, text: 'Ada'},
      onForm(name), ['Enter text into edit “Name”', formTitle, 'Ada']);
    await check('a11y.input', {selector: {role: 'edit', name: 'Name'}, text: 'Grace'},
      onForm(name), ['Enter text into edit “Name”', 'Grace']);
    // Keyboard tools land on the focused window (a pointer move changes no focus).
    const inFocus = {window: shownWindow(focused)};
    const focusTitle = '“' + focused.title + '”';
    await check('keyboard.press', {key: 'enter'}, inFocus, ['Enter', 'in the focused window', focusTitle]);
    await check('keyboard.combo', {keys: 'ctrl+a'}, inFocus, ['Ctrl', focusTitle]);
    await check('keyboard.type', {text: 'hello'}, inFocus, ['Type “hello”', 'into the focused window', focusTitle]);

    if (pageErrors.length) fail('page errors: ' + pageErrors.join(' | '));
    result.ok = true;
  } catch (e) {
    result.error = String(e && e.stack || e);
  }
  await finish(browser, result, path.join(SHOTS, 'card-failure.png'));
}

run(main);
