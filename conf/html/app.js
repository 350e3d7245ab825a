/*
 * The chat page: sessions, CSV uploads, images, the model, the database,
 * and a turn's event stream rendered as it comes (the answer, tool calls
 * and results, charts, and the steps seed 002 shows: plan, SQL, result,
 * evaluation).  Model text is markdown, turned into HTML by
 * marked (HTML written by the model is shown as text) and cleaned by
 * DOMPurify before it is shown; everything else from the server (tool
 * input, results, errors, titles) is set as text.  The page loads nothing
 * it was not given: images only from data: and this origin, charts drawn
 * with a loader that refuses the network and vega's expression interpreter
 * (no Function), under the Content-Security-Policy of conf/html/csp.conf.
 */

'use strict';

const SESSIONS = meta('agent-sessions', 'api/sessions/');
const CHAT = meta('agent-chat', 'api/chat/');

const $ = (id) => document.getElementById(id);
const state = { id: null, busy: false, images: [] };

function meta(name, dflt) {
    const m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.content : dflt;
}

function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
}

/* a JSON request; throws the server's "error" sentence */
async function api(method, url, body, type) {
    const opt = { method, headers: {} };
    if (body !== undefined) {
        opt.body = type ? body : JSON.stringify(body);
        opt.headers['Content-Type'] = type || 'application/json';
    }
    const res = await fetch(url, opt);
    const json = res.status === 204 ? null : await res.json().catch(() => null);
    if (!res.ok) {
        throw new Error((json && json.error) || res.status + ' ' + res.statusText);
    }
    return json;
}

function log() { return $('log'); }

function scroll() { log().scrollTop = log().scrollHeight; }

function note(text, cls) {
    const n = el('div', 'note' + (cls ? ' ' + cls : ''), text);
    log().appendChild(n);
    scroll();
    return n;
}

function progress(text) { $('progress').textContent = text || ''; }

/*
 * HTML the model writes is shown as text, not rendered: marked's html
 * tokens are escaped; DOMPurify then cleans what markdown itself made.
 */
function escapeHtml(s) {
    return s.replace(/&/g, '&amp;').replace(/</g, '&lt;')
            .replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

marked.use({ renderer: { html: (token) => escapeHtml(token.text) } });

/*
 * Markdown images and links the model writes: an image from elsewhere
 * would be fetched as soon as it is shown (and could carry the data in its
 * address), so only data: and same-origin images keep their source; links
 * open without an opener or a referrer.
 */
function sameOrigin(src) {
    try {
        const u = new URL(src, location.href);
        return u.protocol === 'data:' || u.origin === location.origin;
    } catch (e) {
        return false;
    }
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'IMG') {
        node.removeAttribute('srcset');
        if (!sameOrigin(node.getAttribute('src') || '')) {
            node.removeAttribute('src');
            node.className = 'blocked';
            node.title = 'image from elsewhere, not loaded';
        }
    }
    if (node.tagName === 'A') {
        node.setAttribute('rel', 'noopener noreferrer');
        node.setAttribute('target', '_blank');
    }
});

/*
 * A chart spec is data: the module keeps an allow-list of Vega-Lite keys
 * (ngx_http_agent_vega.c) and the page does not trust that either, for
 * history written before it.  vega-embed merges a spec's
 * usermeta.embedOptions over the options given here, so usermeta goes,
 * with href (links) and url (fetches) at every depth and a config that is
 * not an object; the loader refuses the network whatever a spec says.
 */
function chartSpec(v, depth) {
    if (depth > 64) return null;
    if (Array.isArray(v)) return v.map((x) => chartSpec(x, depth + 1));
    if (v === null || typeof v !== 'object') return v;
    const out = {};
    for (const [k, x] of Object.entries(v)) {
        if (k === 'usermeta' || k === 'href' || k === 'url'
            || k === '__proto__' || k === 'embedOptions') continue;
        if (k === 'config' && (x === null || typeof x !== 'object')) continue;
        if (k === '$schema' && depth > 0) continue;
        if (k === 'values' || k === 'datasets') {
            out[k] = JSON.parse(JSON.stringify(x));
            continue;
        }
        out[k] = chartSpec(x, depth + 1);
    }
    return out;
}

const noNetwork = () => Promise.reject(new Error('a chart may load nothing'));
const chartLoader = vega.loader();
chartLoader.load = chartLoader.sanitize = noNetwork;
chartLoader.http = chartLoader.file = noNetwork;

const chartOptions = Object.freeze({
    actions: false,
    renderer: 'svg',
    defaultStyle: false,
    tooltip: { disableDefaultStyle: true },
    ast: true,
    expr: vega.expressionInterpreter,
    loader: chartLoader,
});

function chart(div, spec) {
    const s = chartSpec(spec, 0);
    if (typeof s.$schema === 'string'
        && !s.$schema.startsWith('https://vega.github.io/schema/vega-lite/')) {
        delete s.$schema;
    }
    return vegaEmbed(div, s, Object.assign({}, chartOptions))
        .catch((e) => div.appendChild(el('pre', 'error', String(e))));
}

/* model text: markdown, sanitized; the cursor while it streams */
function render(box, text, streaming) {
    const html = DOMPurify.sanitize(marked.parse(text));
    box.body.innerHTML = html;
    if (streaming) box.body.appendChild(el('span', 'cursor'));
}

function assistantBox() {
    const div = el('div', 'msg assistant');
    const tools = el('div', 'tools');
    const body = el('div', 'body');
    div.append(tools, body);
    log().appendChild(div);
    return { div, tools, body, text: '', calls: {} };
}

/* a tool call, collapsed: its input (the SQL when there is one) */
function toolStart(box, id, name, input) {
    const d = el('details', 'tool');
    const s = el('summary', null, 'tool ' + name + ' …');
    d.appendChild(s);
    const q = input && typeof input.query === 'string'
              ? input.query : JSON.stringify(input || {}, null, 2);
    d.appendChild(el('pre', 'input', q));
    box.tools.appendChild(d);
    box.calls[id] = { d, s, name };
    return box.calls[id];
}

/* its result: rows as a table, a Vega-Lite spec as a chart, or text */
function toolResult(box, id, name, content) {
    const c = box.calls[id] || toolStart(box, id, name, null);
    if (typeof content === 'string') {
        try { content = JSON.parse(content); } catch (e) { /* text */ }
    }
    if (content && content.error) {
        c.s.textContent = 'tool ' + c.name + ': error';
        c.d.appendChild(el('pre', 'error', String(content.error)));
        return;
    }
    if (content && content.type === 'vega_lite_spec' && content.spec) {
        c.s.textContent = 'tool ' + c.name + ': chart';
        const div = el('div', 'chart');
        box.tools.appendChild(div);
        chart(div, content.spec);
        return;
    }
    if (content && Array.isArray(content.columns) && Array.isArray(content.rows)) {
        c.s.textContent = 'tool ' + c.name + ': ' + content.row_count
                          + ' row' + (content.row_count === 1 ? '' : 's')
                          + (content.truncated ? ' (truncated)' : '');
        c.d.appendChild(table(content.columns, content.rows));
        c.d.open = true;
        return;
    }
    c.s.textContent = 'tool ' + c.name + ': done';
    c.d.appendChild(el('pre', 'output',
                       typeof content === 'string'
                       ? content : JSON.stringify(content, null, 2)));
}

function table(columns, rows) {
    const t = el('table', 'result');
    const head = t.createTHead().insertRow();
    for (const col of columns) {
        head.appendChild(el('th', null, typeof col === 'string'
                                        ? col : (col.name || JSON.stringify(col))));
    }
    const body = t.createTBody();
    for (const row of rows) {
        const tr = body.insertRow();
        for (const v of row) tr.insertCell().textContent = v === null ? 'NULL' : String(v);
    }
    return t;
}

/* --- sessions ------------------------------------------------------- */

async function loadSessions() {
    const res = await api('GET', SESSIONS + '?limit=50');
    const ul = $('sessions');
    ul.textContent = '';
    for (const s of res.sessions) {
        const li = el('li', s.id === state.id ? 'current' : '',
                      s.title || s.id.slice(0, 8));
        li.title = s.created_at;
        li.dataset.id = s.id;
        li.onclick = () => open(s.id);
        ul.appendChild(li);
    }
}

async function newSession() {
    const s = await api('POST', SESSIONS,
                        { title: 'Session ' + new Date().toLocaleString() });
    await open(s.id);
}

async function open(id) {
    state.id = id;
    const s = await api('GET', SESSIONS + id);
    $('title').textContent = s.title || id;
    for (const x of ['model', 'csv', 'image', 'q']) $(x).disabled = false;
    document.querySelector('#ask button').disabled = false;
    log().textContent = '';
    state.images = [];
    attached();
    await Promise.all([loadSessions(), loadModels(), loadDatabases(),
                       history()]);
}

/*
 * a reopened session: its last page of messages, tool calls and results
 * included; earlier pages on request (GET /messages pages by "before")
 */
async function history(limit) {
    const n = limit || 200;
    const res = await api('GET', SESSIONS + state.id
                          + '/messages?include_tools=1&limit=' + n);
    if (res.has_more) {
        const b = el('button', 'earlier', 'Show earlier messages');
        b.type = 'button';
        b.onclick = () => {
            log().textContent = '';
            history(Math.min(n * 2, 1000)).catch((e) => note(e.message, 'error'));
        };
        log().appendChild(b);
    }
    let box = null;
    for (const m of res.messages) {
        if (m.role === 'user') {
            box = null;
            log().appendChild(userBox(m.content,
                                      (m.metadata && m.metadata.images) || []));
            continue;
        }
        if (m.role === 'tool') {
            if (box) toolResult(box, m.tool_call_id, m.name, m.content);
            continue;
        }
        if (!box) box = assistantBox();
        for (const c of m.tool_calls || []) {
            toolStart(box, c.id, c.name, c.arguments);
        }
        if (m.content) {
            box.text += (box.text ? '\n\n' : '') + m.content;
            render(box, box.text, false);
        }
    }
    scroll();
}

async function loadModels() {
    const res = await api('GET', CHAT + state.id + '/model');
    const sel = $('model');
    sel.textContent = '';
    for (const [name, usable] of Object.entries(res.models)) {
        const o = el('option', null, name + (usable ? '' : ' (no key)'));
        o.value = name;
        o.disabled = !usable;
        o.selected = name === res.model;
        sel.appendChild(o);
    }
}

/* seed 004's connections: the databases this location may use */
async function loadDatabases() {
    const res = await api('GET', CHAT + state.id + '/connection');
    const sel = $('database');
    sel.textContent = '';
    sel.disabled = res.databases.length === 0;
    const none = el('option', null, res.databases.length ? '(none)' : '(no databases)');
    none.value = '';
    sel.appendChild(none);
    for (const name of res.databases) {
        const o = el('option', null, name);
        o.value = name;
        o.selected = name === res.database;
        sel.appendChild(o);
    }
}

async function setDatabase() {
    const name = $('database').value;
    if (!name) return;
    try {
        const r = await api('POST', CHAT + state.id + '/connection',
                            { database: name });
        note('connected ' + r.database + ': ' + r.tables.length + ' table'
             + (r.tables.length === 1 ? '' : 's') + ' ('
             + r.tables.map((t) => t.name).join(', ') + ')', 'connected');
    } catch (e) {
        note(e.message, 'error');
    }
}

/* images to send with the next message: base64 of the files, as the API takes */
async function attach() {
    for (const f of $('image').files) {
        const url = await new Promise((ok, fail) => {
            const r = new FileReader();
            r.onload = () => ok(r.result);
            r.onerror = () => fail(r.error);
            r.readAsDataURL(f);
        });
        state.images.push({ mime_type: f.type, data: url.slice(url.indexOf(',') + 1),
                            name: f.name });
    }
    $('image').value = '';
    attached();
}

function attached() {
    $('attached').textContent = state.images.length
        ? state.images.map((i) => i.name).join(', ') : '';
}

/* a user's message: its text, its images as thumbnails (data: URLs) */
function userBox(text, images) {
    const div = el('div', 'msg user', text);
    for (const i of images) {
        if (i.data && /^image\/(png|jpeg|webp|gif)$/.test(i.mime_type)) {
            const img = el('img', 'thumb');
            img.alt = 'image';
            img.src = 'data:' + i.mime_type + ';base64,' + i.data;
            div.appendChild(img);
        } else {
            div.appendChild(el('span', 'thumb', '[' + (i.mime_type || 'image')
                               + (i.size ? ', ' + i.size + ' bytes' : '') + ']'));
        }
    }
    return div;
}

async function setModel() {
    try {
        await api('POST', CHAT + state.id + '/model', { name: $('model').value });
        note('model: ' + $('model').value);
    } catch (e) {
        note(e.message, 'error');
    }
}

async function upload() {
    const f = $('csv').files[0];
    if (!f) return;
    try {
        const r = await api('POST', SESSIONS + state.id + '/resources?name='
                            + encodeURIComponent(f.name), f, 'text/csv');
        note('uploaded ' + r.name + ': table ' + r.table + ', '
             + r.row_count + ' rows, columns '
             + r.columns.map((c) => c.name || c).join(', '), 'upload');
    } catch (e) {
        note('upload failed: ' + e.message, 'error');
    }
    $('csv').value = '';
}

/* --- a turn ------------------------------------------------------------ */

async function ask(ev) {
    ev.preventDefault();
    const text = $('q').value.trim();
    if (!text || !state.id || state.busy) return;
    state.busy = true;
    $('q').value = '';
    const images = state.images;
    state.images = [];
    attached();
    log().appendChild(userBox(text, images));
    const box = assistantBox();
    render(box, '', true);
    scroll();

    try {
        const res = await fetch(CHAT + state.id + '/message', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify(images.length
                ? { message: text, images: images.map((i) => ({
                        mime_type: i.mime_type, data: i.data })) }
                : { message: text }),
        });
        if (!res.ok) {
            const j = await res.json().catch(() => null);
            throw new Error((j && j.error) || res.status + ' ' + res.statusText);
        }
        await events(res.body, (e) => handle(box, e));
    } catch (e) {
        failed(box, e.message);
    }
    state.busy = false;
    progress('');
    loadSessions().catch(() => {});
}

/* the stream: "data: JSON" lines, events split by blank lines */
async function events(body, on) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const data = block.split('\n').filter((l) => l.startsWith('data:'))
                              .map((l) => l.slice(5).trimStart()).join('\n');
            if (data) on(JSON.parse(data));
        }
    }
}

function handle(box, e) {
    switch (e.type) {
    case 'start':
        return;
    case 'chunk':
        box.text += e.content;
        if (!box.pending) {
            box.pending = true;
            requestAnimationFrame(() => {
                box.pending = false;
                render(box, box.text, !box.done);
                scroll();
            });
        }
        return;
    case 'tool_start':
        toolStart(box, e.id, e.name, e.input);
        progress('running ' + e.name);
        return scroll();
    case 'tool_result':
        toolResult(box, e.id, e.name, e.content);
        return scroll();
    case 'node':
        progress(e.status === 'start' ? 'step: ' + e.name : '');
        return;
    case 'interrupt':
        waits(box, e.data || {});
        return scroll();
    case 'end':
        box.done = true;
        box.text = box.text || e.full_response || '';
        render(box, box.text, false);
        box.div.classList.add('done');
        return scroll();
    case 'error':
        return failed(box, e.error + (e.code ? ' (' + e.code + ')' : ''));
    default:
        /* a graph's own event: {"type": NAME, "data": ...} */
        step(box, e.type, e.data);
        return scroll();
    }
}

/*
 * The run waits for a human (an interrupt node, interrupt_before/after, or
 * a tools node's approve=): its value shown, and the answer sent with
 * POST /resume, whose stream continues in a new box.  Tool calls to
 * approve get Approve, Edit (their arguments) and Reject.
 */
function waits(box, data) {
    const d = el('div', 'waits');
    const calls = Array.isArray(data.value)
                  && data.value.every((c) => c && c.name !== undefined);
    d.appendChild(el('div', 'note', calls
        ? 'waiting for your approval of ' + data.value.length + ' tool call'
          + (data.value.length === 1 ? '' : 's')
        : 'waiting for your answer at "' + data.node + '"'));
    const area = el('textarea', 'answer');
    area.rows = 3;
    area.value = calls ? JSON.stringify(data.value[0].args || {}, null, 2)
                       : (data.value === null || data.value === undefined
                          ? '' : typeof data.value === 'string' ? data.value
                          : JSON.stringify(data.value, null, 2));
    if (calls) {
        for (const c of data.value) {
            d.appendChild(el('pre', 'input', c.name + ' '
                             + JSON.stringify(c.args)));
        }
    } else if (area.value) {
        d.appendChild(el('pre', 'input', area.value));
        area.value = '';
    }
    d.appendChild(area);
    const buttons = el('div', 'buttons');
    const answer = (resume) => () => {
        for (const b of buttons.querySelectorAll('button')) b.disabled = true;
        resumeRun(resume).catch((e) => note(e.message, 'error'));
    };
    const button = (label, resume) => {
        const b = el('button', null, label);
        b.type = 'button';
        b.className = label.toLowerCase();
        b.onclick = answer(resume);
        buttons.appendChild(b);
    };
    if (calls) {
        button('Approve', 'approve');
        const edit = el('button', 'edit', 'Edit');
        edit.type = 'button';
        edit.onclick = () => {
            let args;
            try { args = JSON.parse(area.value); } catch (e) {
                note('the arguments are not JSON: ' + e.message, 'error');
                return;
            }
            answer({ action: 'edit', args })();
        };
        buttons.appendChild(edit);
        button('Reject', { action: 'reject', reason: 'rejected on the page' });
    } else {
        const send = el('button', 'answer', 'Answer');
        send.type = 'button';
        send.onclick = () => answer(area.value.trim() || 'yes')();
        buttons.appendChild(send);
        button('Approve', 'yes');
        button('Reject', 'no');
    }
    d.appendChild(buttons);
    box.tools.appendChild(d);
}

async function resumeRun(resume) {
    const box = assistantBox();
    render(box, '', true);
    try {
        const res = await fetch(CHAT + state.id + '/resume', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ resume }),
        });
        if (!res.ok) {
            const j = await res.json().catch(() => null);
            throw new Error((j && j.error) || res.status + ' ' + res.statusText);
        }
        await events(res.body, (e) => handle(box, e));
    } catch (e) {
        failed(box, e.message);
    }
    progress('');
}

/*
 * seed 002's work as it goes: the plan, the SQL, each attempt's result or
 * error, the evaluation; any other event of a graph as its JSON
 */
function step(box, type, data) {
    const d = el('details', 'step ' + type);
    const s = el('summary');
    d.appendChild(s);
    if (type === 'plan' && data && typeof data === 'object') {
        const steps = ['code', 'evaluation', 'chart', 'explanation']
            .filter((k) => data['needs_' + k]);
        s.textContent = 'plan: ' + (steps.join(', ') || 'answer directly');
        if (data.reasoning) d.appendChild(el('p', null, String(data.reasoning)));
    } else if (type === 'sql' && typeof data === 'string') {
        s.textContent = 'SQL';
        d.appendChild(el('pre', 'input', data));
    } else if (type === 'result' && data && typeof data === 'object') {
        if (data.ok && data.result && Array.isArray(data.result.rows)) {
            s.textContent = 'result: ' + data.result.row_count + ' row'
                            + (data.result.row_count === 1 ? '' : 's');
            d.appendChild(el('pre', 'input', String(data.query || '')));
            d.appendChild(table(data.result.columns || [], data.result.rows));
            d.open = true;
        } else {
            s.textContent = 'attempt failed';
            d.appendChild(el('pre', 'input', String(data.query || '')));
            d.appendChild(el('pre', 'error', String(data.error || '')));
        }
    } else if (type === 'evaluation' && typeof data === 'string') {
        s.textContent = 'evaluation';
        const b = el('div', 'body');
        d.appendChild(b);
        render({ body: b }, data, false);
    } else {
        s.textContent = type;
        d.appendChild(el('pre', 'output', JSON.stringify(data, null, 2)));
    }
    box.tools.appendChild(d);
}

function failed(box, text) {
    box.done = true;
    render(box, box.text, false);
    box.div.classList.add('done');
    box.div.appendChild(el('div', 'note error', text));
    scroll();
}

$('new').onclick = () => newSession().catch((e) => note(e.message, 'error'));
$('model').onchange = setModel;
$('csv').onchange = upload;
$('database').onchange = setDatabase;
$('image').onchange = () => attach().catch((e) => note(e.message, 'error'));
$('ask').onsubmit = ask;
$('q').onkeydown = (e) => {
    if (e.key === 'Enter' && !e.shiftKey) ask(e);
};
loadSessions().catch((e) => note('cannot list sessions: ' + e.message, 'error'));
