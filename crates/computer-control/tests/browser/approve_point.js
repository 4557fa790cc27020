// Where the operator console's Approve button is on the screen, for a test that has
// the agent aim at it: connects to a running chromium over the DevTools protocol
// (argv[2]: http://127.0.0.1:PORT), signs the console in through its form as the
// person at the desk would (env CC_OPERATOR_TOKEN), waits for the page's Approve button
// and prints {"x":..,"y":..}, its centre in X screen pixels. Clicks nothing else.
const { chromium } = require('playwright-core');

(async () => {
  const browser = await chromium.connectOverCDP(process.argv[2]);
  const deadline = Date.now() + 60000;
  for (;;) {
    for (const context of browser.contexts()) {
      for (const page of context.pages()) {
        if (!(await page.title()).includes('operator console')) continue;
        if (await page.isVisible('#login') && process.env.CC_OPERATOR_TOKEN) {
          await page.fill('#token', process.env.CC_OPERATOR_TOKEN);
          await page.click('#login-form button[type="submit"]');
          await page.waitForSelector('#app:not([hidden])', { timeout: 20000 });
        }
        const button = page.getByRole('button', { name: 'Approve', exact: true }).first();
        if (await button.count() === 0) continue;
        const box = await button.boundingBox();
        if (!box) continue;
        const frame = await page.evaluate(() => ({
          x: window.screenX + (window.outerWidth - window.innerWidth) / 2,
          y: window.screenY + (window.outerHeight - window.innerHeight),
          scale: window.devicePixelRatio,
        }));
        const x = Math.round(frame.x + (box.x + box.width / 2) * frame.scale);
        const y = Math.round(frame.y + (box.y + box.height / 2) * frame.scale);
        console.log(JSON.stringify({ x, y }));
        process.exit(0);
      }
    }
    if (Date.now() > deadline) {
      const seen = [];
      for (const context of browser.contexts()) {
        for (const page of context.pages()) {
          seen.push((await page.title()) + ': ' + JSON.stringify(await page.evaluate(() => [...document.querySelectorAll('button')].map((b) => b.className + '|' + b.textContent + '|' + b.getBoundingClientRect().width))));
        }
      }
      console.error('no Approve button on an operator console page; pages: ' + JSON.stringify(seen));
      process.exit(1);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
