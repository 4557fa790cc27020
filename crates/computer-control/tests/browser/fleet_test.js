// Drives the fleet console in Debian's chromium, as an operator would: an agent's token
// is refused at the sign-in, the operator signs in through the form, sees every desk,
// approves the governed action waiting on each desk named in CC_DESKS, presses Stop all
// (every desk then shows `stopped`), and resumes those desks one by one.
// Run by tests/fleet_plane.rs against a live plane; prints one JSON result line last.
//
// Env: CC_BASE (the plane, http://127.0.0.1:PORT), CC_OPERATOR_TOKEN, CC_AGENT_TOKEN
//      (one desk's agent token), CC_DESKS (comma-separated desk names with a governed
//      action waiting), CHROMIUM (default /usr/bin/chromium), CC_STEPS (default
//      `approve,stop-all`: `approve` alone leaves the desks running), CC_RESOLVE
//      (`NAME ADDRESS`: the plane's name, for a plane reached by a name DNS does not know).
'use strict';

const {fail, launch, finish, run} = require('./harness');

const BASE = process.env.CC_BASE;
const OPERATOR = process.env.CC_OPERATOR_TOKEN;
const AGENT = process.env.CC_AGENT_TOKEN;
const DESKS = (process.env.CC_DESKS || '').split(',').filter(Boolean);
const STEPS = (process.env.CC_STEPS || 'approve,stop-all').split(',');
const RESOLVE = process.env.CC_RESOLVE ? [`--host-resolver-rules=MAP ${process.env.CC_RESOLVE}`] : [];
const T = 20000;

async function main() {
  if (!BASE || !OPERATOR || !AGENT || !DESKS.length) {
    fail('CC_BASE, CC_OPERATOR_TOKEN, CC_AGENT_TOKEN and CC_DESKS are required');
  }
  const browser = await launch('cc-fleet-chromium-', RESOLVE);
  const steps = [];
  const result = {ok: false, steps};
  try {
    const page = browser.context.pages()[0] || await browser.context.newPage();
    await page.goto(BASE + '/');
    await page.waitForSelector('#login:not([hidden])', {timeout: T});

    // An agent's token opens nothing.
    await page.fill('#token', AGENT);
    await page.click('#login-form button[type=submit]');
    await page.waitForFunction(() => document.getElementById('login-error').textContent.length > 0, null, {timeout: T});
    if (!(await page.isHidden('#app'))) fail('the agent token opened the console');
    steps.push('the agent token is refused');

    await page.fill('#token', OPERATOR);
    await page.click('#login-form button[type=submit]');
    await page.waitForSelector('#app:not([hidden])', {timeout: T});
    if (page.url().includes(OPERATOR)) fail('the token is in the address');
    steps.push('signed in through the form');

    for (const desk of DESKS) {
      const card = `article.desk[data-desk="${desk}"]`;
      const approve = page.locator(`${card} .governed button.btn-approve`);
      await approve.first().waitFor({timeout: T});
      await approve.first().click({timeout: T});
      await page.waitForFunction((sel) => {
        const c = document.querySelector(sel);
        return c && !c.querySelector('.governed');
      }, card, {timeout: T});
      steps.push('approved on ' + desk);
    }
    const summary = await page.textContent('#summary');
    if (!/0 waiting for you/.test(summary)) fail('still waiting: ' + summary);
    steps.push(summary);

    if (STEPS.includes('stop-all')) {
      await page.click('#stop-all');
      await page.waitForFunction(() => /Every desk is stopped with nothing held/.test(document.getElementById('banner').textContent), null, {timeout: T});
      for (const desk of DESKS) {
        await page.waitForSelector(`article.desk[data-desk="${desk}"][data-state="stopped"]`, {timeout: T});
      }
      steps.push('stop-all: every desk stopped with nothing held');
      for (const desk of DESKS) {
        await page.locator(`button[aria-label="Resume ${desk}"]`).click({timeout: T});
        await page.waitForFunction((sel) => {
          const c = document.querySelector(sel);
          return c && c.dataset.state !== 'stopped';
        }, `article.desk[data-desk="${desk}"]`, {timeout: T});
      }
      steps.push('resumed each desk');
    }
    result.ok = true;
  } catch (e) {
    result.error = String(e && e.stack || e);
  }
  await finish(browser, result, null);
}

run(main);
