// The chat page in Debian's Chromium, driven by playwright-core: a new
// session, a CSV upload, a question; the answer must stream (a cursor),
// end, show the SQL result as a table and the ask_analyst chart as an SVG
// with marks, and the HTML the model put in its answer must not run.  The
// session reopened shows the same.  Prints one JSON object of findings;
// t/ui_browser.t judges them.

'use strict';

const { chromium } = require('playwright-core');

const [url, csv, shot, poisoned, png] = process.argv.slice(2);

async function findings(page) {
    return page.evaluate(() => ({
        rows: document.querySelectorAll('.msg.assistant table.result tbody tr').length,
        cells: [...document.querySelectorAll('.msg.assistant table.result td')]
            .slice(0, 2).map((td) => td.textContent),
        sql: (document.querySelector('.msg.assistant details.tool pre.input')
              || {}).textContent || '',
        chartMarks: document.querySelectorAll('.chart svg .mark-rect path, '
                                              + '.chart svg g.mark-rect > path').length,
        answer: (document.querySelector('.msg.assistant .body') || {}).innerText || '',
        strong: (document.querySelector('.msg.assistant .body strong') || {}).textContent || '',
        pwned: window.__pwned === undefined ? null : window.__pwned,
        onerror: document.querySelectorAll('#log [onerror]').length,
        scripts: document.querySelectorAll('#log script').length,
        images: document.querySelectorAll('#log .msg img[onerror], '
                                           + '#log .msg img[src="x"]').length,
        remote: [...document.querySelectorAll('#log img[src]')]
            .filter((i) => !/^data:/.test(i.getAttribute('src'))
                    && new URL(i.src).origin !== location.origin).length,
        blocked: document.querySelectorAll('#log .msg .body img.blocked:not([src])').length,
        dataImages: document.querySelectorAll('#log .msg .body img[src^="data:"]').length,
        linkRel: (document.querySelector('#log .msg .body a') || { rel: '' }).rel,
        styled: getComputedStyle(document.body).display === 'flex',
        thumbs: document.querySelectorAll('#log .msg.user img.thumb[src^="data:image/png"]').length,
        thumbPlaceholders: document.querySelectorAll('#log .msg.user span.thumb').length,
    }));
}

(async () => {
    const out = { errors: [] };
    const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        args: ['--no-sandbox', '--disable-gpu'],
    });
    try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 1200 } });
        page.on('pageerror', (e) => out.errors.push(String(e)));
        // a refused image (the sanitized <img src=x>) is not a page error
        page.on('console', (m) => {
            if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) {
                out.errors.push(m.text() + ' @' + JSON.stringify(m.location()));
            }
        });
        page.setDefaultTimeout(20000);

        await page.goto(url);
        await page.click('#new');
        await page.waitForSelector('#sessions li.current');
        out.session = await page.$eval('#sessions li.current', (li) => li.dataset.id);

        await page.setInputFiles('#csv', csv);
        out.upload = await (await page.waitForSelector('.note.upload')).textContent();

        await page.setInputFiles('#image', png);
        await page.waitForFunction(() => document.querySelector('#attached').textContent);
        await page.fill('#q', 'How many people live in each city? Chart it.');
        await page.click('#ask button');

        // the answer streams: a cursor at the end of text that grows
        await page.waitForSelector('.msg.assistant .body .cursor',
                                   { state: 'attached' });
        out.streamingText = await page.$eval('.msg.assistant .body', (b) => b.innerText);
        await page.waitForSelector('.msg.assistant.done', { timeout: 30000 });
        out.cursorAfter = await page.$$eval('.msg.assistant .cursor', (c) => c.length);
        await page.waitForSelector('.chart svg');
        await page.waitForTimeout(300);
        out.live = await findings(page);
        await page.screenshot({ path: shot, fullPage: false });

        // the session reopened from its messages
        await page.click('#new');
        await page.waitForFunction((id) =>
            document.querySelector('#sessions li.current')
            && document.querySelector('#sessions li.current').dataset.id !== id,
            out.session);
        await page.click('#sessions li[data-id="' + out.session + '"]');
        await page.waitForSelector('.msg.assistant table.result');
        await page.waitForSelector('.chart svg');
        await page.waitForTimeout(300);
        out.reopened = await findings(page);

        // a session whose stored chart was written before the module
        // cleaned specs
        await page.click('#sessions li[data-id="' + poisoned + '"]');
        await page.waitForSelector('.msg.assistant .chart');
        await page.waitForFunction(() => {
            const c = document.querySelector('.chart');
            return c && (c.querySelector('svg') || c.querySelector('pre.error'));
        });
        await page.waitForTimeout(500);
        out.poisoned = await page.evaluate(() => ({
            drawn: !!document.querySelector('.chart svg'),
            actions: document.querySelectorAll('.vega-actions, details[title="Click to view actions"]').length,
            pwned: window.__pwned === undefined ? null : window.__pwned,
            links: document.querySelectorAll('.chart svg a, .chart [href]').length,
        }));

        // seed 002: the shipped data_scientist graph under /ds/
        await page.goto(url + 'ds/');
        await page.click('#new');
        await page.waitForSelector('#sessions li.current');
        await page.setInputFiles('#csv', csv);
        await page.waitForSelector('.note.upload');
        await page.fill('#q', 'Show how many people live in each city');
        await page.click('#ask button');
        await page.waitForSelector('.msg.assistant.done', { timeout: 30000 });
        await page.waitForSelector('.chart svg');
        await page.waitForTimeout(300);
        out.ds = await page.evaluate(() => ({
            steps: [...document.querySelectorAll('.msg.assistant details.step summary')]
                .map((s) => s.textContent),
            sql: (document.querySelector('details.step.sql pre') || {}).textContent || '',
            resultRows: document.querySelectorAll('details.step.result table.result tbody tr').length,
            chartMarks: document.querySelectorAll('.chart svg .mark-rect path, '
                                                  + '.chart svg g.mark-rect > path').length,
            evaluation: (document.querySelector('details.step.evaluation .body') || {}).textContent || '',
            strong: (document.querySelector('.msg.assistant > .body strong') || {}).textContent || '',
        }));

        // a human approves a tool call (approve=on) under /hitl/
        await page.goto(url + 'hitl/');
        await page.click('#new');
        await page.waitForSelector('#sessions li.current');
        await page.setInputFiles('#csv', csv);
        await page.waitForSelector('.note.upload');
        await page.fill('#q', 'hitl count');
        await page.click('#ask button');
        await page.waitForSelector('.waits button.approve');
        out.hitl = {
            waiting: await page.$eval('.waits .note', (n) => n.textContent),
            call: await page.$eval('.waits pre.input', (n) => n.textContent),
        };
        await page.click('.waits button.approve');
        await page.waitForFunction(() => {
            const b = [...document.querySelectorAll('.msg.assistant')];
            return b.length >= 2 && b[b.length - 1].classList.contains('done');
        });
        out.hitl.rows = await page.$$eval('.msg.assistant table.result tbody tr',
                                          (r) => r.length);
        out.hitl.answer = await page.$eval('.msg.assistant:last-of-type > .body',
                                           (b) => b.innerText.trim());

        // seed 004: the shipped sql_assistant graph under /sa/, its picker
        await page.goto(url + 'sa/');
        await page.click('#new');
        await page.waitForSelector('#sessions li.current');
        await page.waitForSelector('#database option[value="shop"]', { state: 'attached' });
        out.sa = { databases: await page.$$eval('#database option', (o) => o.map((x) => x.textContent)) };
        await page.selectOption('#database', 'shop');
        out.sa.connected = await (await page.waitForSelector('.note.connected')).textContent();
        await page.fill('#q', 'What are the totals by region?');
        await page.click('#ask button');
        await page.waitForSelector('.msg.assistant.done', { timeout: 30000 });
        out.sa.rows = await page.$$eval('.msg.assistant table.result tbody tr', (r) => r.length);
        out.sa.answer = await page.$eval('.msg.assistant > .body', (b) => b.innerText.trim());
        const sid = await page.$eval('#sessions li.current', (li) => li.dataset.id);
        await page.click('#new');
        await page.waitForFunction((id) =>
            document.querySelector('#sessions li.current')
            && document.querySelector('#sessions li.current').dataset.id !== id, sid);
        await page.click('#sessions li[data-id="' + sid + '"]');
        await page.waitForSelector('.msg.assistant table.result');
        out.sa.selected = await page.$eval('#database', (s) => s.value);
    } catch (e) {
        out.errors.push('driver: ' + e.message);
    } finally {
        await browser.close();
    }
    console.log(JSON.stringify(out));
})();
