// SPDX-License-Identifier: GPL-2.0-only
// Parses one Chrome Trace Event file with the trace engine of Chromium's own
// DevTools (the Performance panel's models/trace, bundled in Debian's
// chromium, page devtools://devtools/bundled/trace_app.html), and writes what
// it built: process names, and per thread its name and its slices with the
// depth and parent DevTools gave each.
// Usage: node devtools.mjs INPUT OUT_JSON
// Prints one line: "ok" or "error: WHY"; exits non-zero on error.
import { readFileSync, writeFileSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

const [input, outJson] = process.argv.slice(2);
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';

// Runs inside the DevTools page: its modules are importable there.
async function parse(text) {
	const Trace = await import('./models/trace/trace.js');
	const model = Trace.TraceModel.Model.createWithAllHandlers();
	await model.parse(JSON.parse(text).traceEvents, { metadata: {}, isFreshRecording: false });
	const { data } = model.parsedTrace(0);
	const processNames = {};
	for (const [pid, ev] of data.Meta.processNames)
		processNames[pid] = ev.args.name;
	const threads = [];
	for (const [pid, proc] of data.Renderer.processes) {
		for (const [tid, thread] of proc.threads) {
			const slices = thread.entries.map((e) => {
				const node = data.Renderer.entryToNode.get(e);
				return { name: e.name, ts: e.ts, dur: e.dur, args: e.args, depth: node ? node.depth : null,
					 parent: node && node.parent ? node.parent.entry.name : null };
			});
			threads.push({ pid, tid, name: thread.name, slices });
		}
	}
	return { generic: data.Meta.traceIsGeneric, processNames, threads,
		 warnings: [...data.Warnings.perWarning.keys()] };
}

async function main() {
	// Root in a container has no user namespace for chromium's sandbox.
	const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
		args: ['--no-sandbox', '--disable-gpu'] });
	try {
		const page = await browser.newPage();
		await page.goto('devtools://devtools/bundled/trace_app.html');
		const built = await page.evaluate(parse, readFileSync(input, 'utf8'));
		writeFileSync(outJson, JSON.stringify(built));
	} finally {
		await browser.close();
	}
}

main().then(() => console.log('ok'), (e) => { console.log(`error: ${e.message}`); process.exit(1); });
