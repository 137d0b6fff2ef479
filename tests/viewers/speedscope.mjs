// SPDX-License-Identifier: GPL-2.0-only
// Loads one export into speedscope's own web app (the npm package's built
// release) in Debian's chromium, the way a person does: the landing page's
// file input. What speedscope then holds is taken back through its own
// Export (its speedscope JSON), so a test reads what the viewer imported.
// Usage: node speedscope.mjs INPUT OUT_JSON SCREENSHOT_PNG
// Prints one line: "ok" or "error: WHY"; exits non-zero on error.
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const [input, outJson, screenshot] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const app = path.join(here, 'node_modules/speedscope/dist/release/index.html');
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const LOAD_TIMEOUT_MS = 60000;

// speedscope saves through a Blob URL on a clicked <a download>: keep the Blob.
function keepExports() {
	const create = URL.createObjectURL;
	window.__exported = [];
	URL.createObjectURL = (blob) => { window.__exported.push(blob); return create(blob); };
	HTMLAnchorElement.prototype.click = function () {};
}

async function main() {
	// Root in a container has no user namespace for chromium's sandbox; the
	// flame chart draws with WebGL, in software here (the page is our own file).
	const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--enable-unsafe-swiftshader', '--window-size=1400,900'] });
	try {
		const page = await browser.newPage();
		await page.setViewport({ width: 1400, height: 900 });
		const problems = [];
		page.on('dialog', async (d) => { problems.push(`dialog: ${d.message()}`); await d.dismiss(); });
		page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
		// The importers warn when slices do not nest ("Tried to end ... when ...
		// was on the top of the stack"): Perfetto needs them to nest perfectly too.
		// Chromium's own messages (software WebGL) come from no script.
		page.on('console', (m) => {
			if (m.type() === 'error' || (m.type() === 'warn' && (m.location().url || '').endsWith('.js')))
				problems.push(`console ${m.type()}: ${m.text()}`);
		});
		await page.evaluateOnNewDocument(keepExports);
		await page.goto(`file://${app}`);
		const file = await page.waitForSelector('input#file');
		await file.uploadFile(input);
		// The toolbar's Export tab appears once a profile is loaded; an alert or
		// an error says it will not be.
		const deadline = Date.now() + LOAD_TIMEOUT_MS;
		while (!(await page.evaluate(() => [...document.querySelectorAll('div')]
			.some((d) => d.textContent.endsWith('Export') && d.children.length === 1)))) {
			if (problems.length || Date.now() > deadline)
				throw new Error(problems.join('; ') || 'speedscope loaded nothing');
			await new Promise((r) => setTimeout(r, 100));
		}
		await new Promise((r) => setTimeout(r, 500));	// let the flame chart paint
		await page.screenshot({ path: screenshot });
		await page.keyboard.down('Control');
		await page.keyboard.press('s');
		await page.keyboard.up('Control');
		await page.waitForFunction(() => window.__exported.length > 0, { timeout: LOAD_TIMEOUT_MS });
		const text = await page.evaluate(() => window.__exported[0].text());
		writeFileSync(outJson, text);
		if (problems.length)
			throw new Error(problems.join('; '));
	} finally {
		await browser.close();
	}
}

main().then(() => console.log('ok'), (e) => { console.log(`error: ${e.message}`); process.exit(1); });
