// A page on another origin uses the API, as a chat UI on its own dev
// server does: it creates a session, streams a turn (a JSON POST: a
// preflight first), and streams a LangGraph run whose Content-Location it
// reads.  Run once from an allowed origin and once from one that is not.
// Prints one JSON object per page; t/ops_cors_labels.t judges them.

'use strict';

const { chromium } = require('playwright-core');

const pages = process.argv.slice(2);

(async () => {
    const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        args: ['--no-sandbox', '--disable-gpu'],
    });
    try {
        for (const url of pages) {
            const page = await browser.newPage();
            const out = { url, console: [] };
            page.on('console', (m) => out.console.push(m.text()));
            page.setDefaultTimeout(20000);
            await page.goto(url);
            await page.waitForFunction(() => window.__result !== undefined);
            Object.assign(out, await page.evaluate(() => window.__result));
            console.log(JSON.stringify(out));
            await page.close();
        }
    } catch (e) {
        console.log(JSON.stringify({ died: String(e) }));
    } finally {
        await browser.close();
    }
})();
