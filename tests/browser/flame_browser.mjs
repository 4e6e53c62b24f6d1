// tests/browser/flame_browser.mjs - drives heaptap's flame graph SVG and HTML report in headless
// Chromium (playwright-core) and loads heaptap's collapsed and pprof output into speedscope.
// Called by flame_browser.sh with: SVG REPORT TOPFILE HTTP_BASE ARTIFACT_DIR. Prints what it
// checks; exits 1 on the first broken expectation. Never touches the network beyond 127.0.0.1.
import { chromium } from 'playwright-core';
import fs from 'fs';
import os from 'os';
import path from 'path';

const [svgPath, reportPath, topPath, httpBase, artifacts] = process.argv.slice(2);
let failures = 0;
function check(cond, what) {
	console.log((cond ? 'ok   ' : 'FAIL ') + what);
	if (!cond) failures++;
}

// heaptap top --show_bytes: the three largest flat functions and their shares.
const topRows = fs.readFileSync(topPath, 'utf8').split('\n').slice(1)
	.map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 6)
	.map((f) => ({ flat: +f[0], pct: parseFloat(f[1]), name: f.slice(5).join(' ') }));
const top3 = topRows.slice(0, 3);
console.log('heaptap top:', top3.map((r) => `${r.name} ${r.pct}%`).join(', '));

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'heaptap-chromium-'));
const ctx = await chromium.launchPersistentContext(userDataDir, {
	executablePath: '/usr/bin/chromium',
	headless: true,
	viewport: { width: 1280, height: 900 },
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
// Anything that is not a local file or the loopback server is a failure (and is not fetched).
const foreign = [];
await ctx.route('**/*', (route) => {
	const u = route.request().url();
	if (u.startsWith('file:') || u.startsWith('data:') || u.startsWith(httpBase)) return route.continue();
	foreign.push(u);
	return route.abort();
});

try {
	const page = await ctx.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));

	// ---- the standalone flame graph ----
	let t0 = Date.now();
	await page.goto('file://' + svgPath);
	await page.waitForFunction(() => document.documentElement.htflame !== undefined);
	console.log(`flame graph loaded and initialised in ${Date.now() - t0} ms`);
	const frameState = () => page.evaluate(() => {
		const out = {};
		for (const g of document.querySelectorAll('g.frames > g')) {
			const name = g.querySelector('title').textContent.split('\n')[0].replace(/ \([^(]*\)$/, '');
			const r = g.querySelector('rect');
			if (!(name in out)) out[name] = { w: +r.getAttribute('width'), x: +r.getAttribute('x'),
				hidden: g.classList.contains('hide'), parent: g.classList.contains('parent'),
				fill: r.getAttribute('fill'), label: g.querySelector('text').textContent };
		}
		return out;
	});
	const before = await frameState();
	const leaf = top3[0].name;
	const other = top3[1].name;
	check(before[leaf] && before.all, `frames for 'all' and '${leaf}' exist`);
	check(Math.abs(before[leaf].w / before.all.w - top3[0].pct / 100) < 0.002,
		`${leaf} width share ${(before[leaf].w / before.all.w).toFixed(4)} ~ top ${top3[0].pct}%`);

	// hover: the details line names the frame, its bytes and share, and its file:line
	const leafRect = page.locator('g.frames > g', { has: page.locator(`title:text-matches("^${leaf} \\\\(")`) }).locator('rect');
	await leafRect.hover();
	const details = await page.textContent('text.details');
	check(details.startsWith(`Function: ${leaf} (`) && details.includes(' bytes, ') && /\.c:\d+/.test(details),
		`hover details: ${details}`);

	// click: zoom to leak_slowly (full width, ancestors marked, others hidden, Reset Zoom shown)
	await leafRect.click();
	const zoomed = await frameState();
	check(Math.abs(zoomed[leaf].w - before.all.w) < 0.05, `zoomed ${leaf} width ${zoomed[leaf].w} == ${before.all.w}`);
	check(zoomed[other].hidden === true, `${other} hidden after zoom`);
	check(zoomed.main.parent === true && zoomed.main.w > before.main.w - 0.05, 'ancestor main kept as parent');
	check(!(await page.getAttribute('text.unzoom', 'class')).includes('hide'), 'Reset Zoom visible');
	await page.screenshot({ path: path.join(artifacts, 'flame-zoomed.png') });
	// the zoom is kept in the URL (?x=&y=): a reload shows the same view
	const zoomUrl = page.url();
	check(/[?&]x=[\d.]+&y=[\d.]+/.test(zoomUrl), `zoom recorded in the URL: ${zoomUrl.replace(/^.*\//, '')}`);
	await page.reload();
	await page.waitForFunction(() => document.documentElement.htflame !== undefined);
	const reloaded = await frameState();
	check(Math.abs(reloaded[leaf].w - before.all.w) < 0.05 && reloaded[other].hidden, 'reload restores the zoom from the URL');
	await page.click('text.unzoom');
	const reset = await frameState();
	check(!page.url().includes('x='), 'Reset Zoom clears the URL state');
	check(Math.abs(reset[leaf].w - before[leaf].w) < 0.02 && !reset[other].hidden, 'Reset Zoom restores widths');

	// Search via the button (prompt): matches highlighted, "Matched: P%" = their share
	page.once('dialog', (d) => d.accept('^keep_flat'));
	await page.click('text.search');
	const nmatch = await page.locator('g.frames > g.match').count();
	const matched = await page.textContent('text.matched');
	const want = topRows.filter((r) => r.name.startsWith('keep_flat')).reduce((s, r) => s + r.pct, 0);
	check(nmatch === 2, `search ^keep_flat highlights ${nmatch} frames`);
	const mp = parseFloat((matched.match(/Matched: ([\d.]+)%/) || [])[1]);
	check(Math.abs(mp - want) < 0.25, `${matched} ~ ${want.toFixed(1)}% from heaptap top`);
	const fills = await page.$$eval('g.frames > g.match > rect', (rs) => rs.map((r) => r.getAttribute('fill')));
	check(fills.every((f) => f === 'rgb(230,0,230)'), 'matches are magenta');
	await page.screenshot({ path: path.join(artifacts, 'flame-search.png') });
	await page.click('text.search'); // a second click clears the search
	check((await page.locator('g.frames > g.match').count()) === 0, 'second click clears the search');
	// ic: case-insensitive search; toggling it back re-runs the search case-sensitively
	await page.click('text.ic');
	page.once('dialog', (d) => d.accept('^KEEP_FLAT'));
	await page.click('text.search');
	check((await page.locator('g.frames > g.match').count()) === 2, 'ic: ^KEEP_FLAT matches both keep_flat frames');
	await page.click('text.ic');
	check((await page.locator('g.frames > g.match').count()) === 0, 'ic off: ^KEEP_FLAT matches nothing');
	await page.click('text.search'); // clear
	// Ctrl-F opens the same prompt
	page.once('dialog', (d) => d.accept(leaf));
	await page.keyboard.press('Control+f');
	check((await page.textContent('text.matched')).startsWith('Matched: '), 'Ctrl-F searches');
	check(errors.length === 0, `no script errors in the SVG (${errors.join('; ')})`);

	// ---- the HTML report ----
	t0 = Date.now();
	await page.goto('file://' + reportPath);
	await page.waitForFunction(() => [...document.querySelectorAll('svg.htflame')].every((s) => s.htflame));
	console.log(`report loaded and initialised in ${Date.now() - t0} ms`);
	const suspect = await page.getAttribute('#suspects tr.suspect', 'data-site');
	check(suspect === 'leak_slowly', `top leak suspect in the page: ${suspect}`);
	await page.fill('input.flamesearch[data-for="flame-peak"]', 'leak');
	const peakMatched = await page.textContent('#flame-peak text.matched');
	check(/^Matched: \d/.test(peakMatched) && (await page.locator('#flame-peak g.match').count()) === 1,
		`report search box: ${peakMatched}`);
	check((await page.locator('#flame-diff g.match').count()) === 0, 'search stays within its graph');
	const diffLeaf = page.locator('#flame-diff g.frames > g', { has: page.locator('title:text-matches("^leak_slowly \\\\(")') });
	const wBefore = +(await diffLeaf.locator('rect').getAttribute('width'));
	await diffLeaf.locator('rect').click();
	const wAfter = +(await diffLeaf.locator('rect').getAttribute('width'));
	const hiddenDiff = await page.locator('#flame-diff g.frames > g.hide').count();
	check(wAfter > wBefore + 1 && hiddenDiff > 0, `diff graph zoom: ${wBefore} -> ${wAfter}, ${hiddenDiff} hidden`);
	const fill = await diffLeaf.locator('rect').getAttribute('fill');
	check(/^rgb\(255,/.test(fill), `diff graph leak_slowly is red (${fill})`);
	await page.locator('#chart').scrollIntoViewIfNeeded();
	const box = await page.locator('#chart').boundingBox();
	await page.mouse.move(box.x + box.width - 25, box.y + box.height / 2);
	const info = await page.textContent('#chartinfo');
	check(info.includes('total') && info.includes('leak_slowly'), `chart hover read-out: ${info.slice(0, 120)}`);
	check(errors.length === 0, `no script errors in the report (${errors.join('; ')})`);
	await page.screenshot({ path: path.join(artifacts, 'report.png'), fullPage: true });

	// ---- speedscope: heaptap's collapsed and pprof output show the same top frames ----
	for (const f of ['profile.collapsed', 'profile.pb.gz']) {
		const url = `${httpBase}/speedscope/index.html#profileURL=${encodeURIComponent(`${httpBase}/${f}`)}`;
		await page.goto(url);
		await page.getByText('Sandwich').click({ timeout: 20000 });
		await page.waitForFunction((n) => document.body.textContent.includes(n), top3[2].name, { timeout: 20000 });
		const text = await page.textContent('body');
		// rows read "<total> (<p>%)<self> (<p>%)<name>"; take each top name's self share
		let pos = -1, inOrder = true;
		for (const r of top3) {
			const m = text.match(new RegExp(`\\(([\\d.]+)%\\)[\\d.,]+(?: [KMG]?B)? \\(([\\d.]+)%\\)${r.name}`));
			const p = text.indexOf(r.name);
			if (p < pos) inOrder = false;
			pos = p;
			check(m && Math.abs(parseFloat(m[2]) - r.pct) <= 1, `speedscope ${f}: ${r.name} self ${m ? m[2] : '?'}% ~ ${r.pct}%`);
		}
		check(inOrder, `speedscope ${f}: the top three in heaptap's order`);
		await page.screenshot({ path: path.join(artifacts, `speedscope-${f.replace(/\./g, '_')}.png`) });
	}
	check(foreign.length === 0, `no request left the machine (${foreign.join(', ')})`);
} finally {
	await ctx.close();
	fs.rmSync(userDataDir, { recursive: true, force: true });
}
console.log(failures ? `${failures} check(s) failed` : 'all browser checks passed');
process.exit(failures ? 1 : 0);
