// What every console script run by tests/http_browser.rs shares: Debian's chromium in
// a fresh profile with the flags this machine's closed network needs, and the one JSON
// result line the Rust test reads last.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const {chromium} = require('playwright-core');

function fail(msg) {
  throw new Error(msg);
}

// A headless chromium (CHROMIUM, default /usr/bin/chromium) in a new profile, with
// `extra` flags (e.g. --host-resolver-rules for a server known by a name only).
async function launch(prefix, extra = []) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ...extra,
    ],
    viewport: {width: 1440, height: 1000},
  });
  return {context, profile};
}

// Keeps a screenshot of a failure (best effort), closes the browser, removes its
// profile and prints the result line.
async function finish(browser, result, shot) {
  if (!result.ok && shot) {
    try {
      const p = browser.context.pages()[0];
      if (p) await p.screenshot({path: shot});
    } catch (_) { /* best effort */ }
  }
  await browser.context.close();
  fs.rmSync(browser.profile, {recursive: true, force: true});
  process.stdout.write(JSON.stringify(result) + '\n');
  process.exitCode = result.ok ? 0 : 1;
}

// Runs `main`; an error before it could print its own result still prints one.
function run(main) {
  main().catch((e) => {
    process.stdout.write(JSON.stringify({ok: false, error: String(e && e.stack || e)}) + '\n');
    process.exitCode = 1;
  });
}

module.exports = {fail, launch, finish, run};
