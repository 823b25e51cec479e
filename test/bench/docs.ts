import { loadavg } from 'node:os';
import { chromium } from 'playwright-core';
import { startStackProcess } from '../integration/global-setup.ts';
import { FIRST_OPERATION_PAINTED, FIRST_OPERATION_PAINTED_AT } from '../support/first-draw.ts';

/**
 * `npm run bench:docs`: how long /docs takes to draw its first operation, in headless Chromium as
 * the browser tests drive it (test/browser/storefront.test.ts), against a local stack of its own.
 * Each run is a new browser context (nothing cached: a first visit). The figure is the page's
 * own clock, from the navigation's start to the first operation painted (test/support/first-draw.ts);
 * the wall time the test sees adds the driver's round trips. Prints every run, the medians, where the time went
 * (the page's resource timings) and the load average, since the machine is shared.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const RUNS = Number(process.env.RUNS ?? 5);

const RESOURCE_TIMINGS = `performance.getEntriesByType('resource').map((entry) =>
  entry.name.replace(/^https?:\\/\\/[^/]+/, '') + ' ' + Math.round(entry.responseEnd) + ' ms (' + Math.round(entry.transferSize / 1024) + ' KB)')`;

const stack = await startStackProcess({ LOCAL_SEED: '0' });
const origin = `http://127.0.0.1:${stack.port}`;
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
const inPage: number[] = [];
const wall: number[] = [];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
try {
  for (let run = 1; run <= RUNS; run++) {
    // A new context has an empty cache: every run is a first visit, in a browser already running.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto('about:blank');
      await page.addInitScript({ content: FIRST_OPERATION_PAINTED });
      const load = loadavg()[0]!.toFixed(1);
      const started = Date.now();
      await page.goto(`${origin}/docs`);
      await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
      wall.push(Date.now() - started);
      const drawn = await page.evaluate<number>(FIRST_OPERATION_PAINTED_AT);
      inPage.push(drawn);
      const timings = await page.evaluate<string[]>(RESOURCE_TIMINGS);
      console.log(`run ${run}: first operation painted ${drawn} ms after the navigation began (${wall.at(-1)} ms as the test sees it; load ${load}); ${timings.join(', ')}`);
    } finally {
      await context.close();
    }
  }
} finally {
  await browser.close();
  await stack.stop();
}
console.log(
  `/docs first operation painted: median ${median(inPage)} ms in the page (min ${Math.min(...inPage)}, max ${Math.max(...inPage)}), median ${median(wall)} ms as the test sees it, over ${RUNS} runs; load average now ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}`,
);
