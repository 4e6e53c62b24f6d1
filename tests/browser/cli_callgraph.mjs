// tests/browser/cli_callgraph.mjs - opens the SVG of `heaptap callgraph --format=svg` in headless
// Chromium (playwright-core) and checks that it fills the window, that the mouse wheel zooms
// (the viewBox shrinks around the pointer), that a drag pans, that a double click restores the
// original view, and that no script error occurs. Called by cli_callgraph.sh with: SVG.
import { chromium } from 'playwright-core';
import fs from 'fs';
import os from 'os';
import path from 'path';

const [svgPath] = process.argv.slice(2);
let failures = 0;
function check(cond, what) {
	console.log((cond ? 'ok   ' : 'FAIL ') + what);
	if (!cond) failures++;
}
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'heaptap-chromium-'));
const ctx = await chromium.launchPersistentContext(userDataDir, {
	executablePath: '/usr/bin/chromium',
	headless: true,
	viewport: { width: 1000, height: 700 },
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
await ctx.route('**/*', (route) => (route.request().url().startsWith('file:') ? route.continue() : route.abort()));
const page = await ctx.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
await page.goto('file://' + path.resolve(svgPath));
const vb = () => page.evaluate(() => {
	const b = document.documentElement.viewBox.baseVal;
	return [b.x, b.y, b.width, b.height];
});
const size = await page.evaluate(() => {
	const r = document.documentElement.getBoundingClientRect();
	return [r.width, r.height];
});
check(size[0] === 1000 && size[1] === 700, `the graph fills the window (${size})`);
const v0 = await vb();
await page.mouse.move(500, 350);
await page.mouse.wheel(0, -100);
await page.waitForTimeout(100);
const v1 = await vb();
check(v1[2] < v0[2] * 0.9 && v1[3] < v0[3] * 0.9, `wheel zooms in (${v0[2].toFixed(1)} -> ${v1[2].toFixed(1)})`);
await page.mouse.move(500, 350);
await page.mouse.down();
await page.mouse.move(600, 400, { steps: 5 });
await page.mouse.up();
const v2 = await vb();
check(v2[0] < v1[0] && v2[1] < v1[1] && Math.abs(v2[2] - v1[2]) < 1e-6, `drag pans (${v1[0].toFixed(1)},${v1[1].toFixed(1)} -> ${v2[0].toFixed(1)},${v2[1].toFixed(1)})`);
await page.mouse.dblclick(500, 350);
const v3 = await vb();
check(v3.every((x, i) => Math.abs(x - v0[i]) < 1e-6), 'double click restores the view');
const names = await page.evaluate(() => Array.from(document.querySelectorAll('text')).map((t) => t.textContent));
check(names.includes('cache_fill') && names.includes('open_session'), 'the demo sites are drawn');
check(errors.length === 0, `no script errors (${errors.join('; ')})`);
await ctx.close();
fs.rmSync(userDataDir, { recursive: true, force: true });
process.exit(failures ? 1 : 0);
