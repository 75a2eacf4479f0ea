// /dashboard in headless Chromium against a running server: two streams decode while a
// 3,000-token prompt prefills; the page must show each with its state, and its timeline must
// show both streams' decode rows in every step that carried the long prompt's prefill.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import puppeteer from 'puppeteer-core';

const env = process.env;
const BATON = env.BATON_BIN;
const MODEL = env.BATON_DASHBOARD_MODEL;
const CHROMIUM = env.BATON_CHROMIUM;
const OUT = env.BATON_DASHBOARD_OUT;
const KEY = 'dashboard-test-key';
if (!BATON || !MODEL || !CHROMIUM) throw new Error('run these tests through tests/dashboard/run.sh');

let server;
let url;
let stderr = '';
let browser;

function withTimeout(promise, ms, what) {
  let timer;
  const t = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms); });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

before(async () => {
  server = spawn(BATON, ['serve', '-m', MODEL, '--port', '0', '--parallel', '4', '--ctx', '4096',
    '--api-key', KEY], { stdio: ['ignore', 'pipe', 'pipe'] });
  server.stderr.on('data', (d) => { stderr = (stderr + d).slice(-100000); });
  const port = await withTimeout(new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = /^baton serve: http:\/\/[^:\s]+:(\d+)/m.exec(out);
      if (m) resolve(Number(m[1]));
    });
    server.on('exit', (code) => reject(new Error(`baton serve exited (${code}):\n${stderr}`)));
  }), 60000, 'baton serve start');
  url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    const r = await fetch(`${url}/health`).catch(() => null);
    if (r && r.status === 200) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill('SIGKILL');
});

// A streaming completion read in the background; resolves `started` at its first token.
function stream(prompt, maxTokens) {
  const controller = new AbortController();
  let startedResolve;
  const started = new Promise((r) => { startedResolve = r; });
  const done = (async () => {
    const r = await fetch(`${url}/v1/completions`, {
      method: 'POST', signal: controller.signal,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ prompt, max_tokens: maxTokens, ignore_eos: true, stream: true }),
    });
    assert.equal(r.status, 200);
    const reader = r.body.getReader();
    let text = '';
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      text += Buffer.from(value).toString();
      if (text.includes('"text"')) startedResolve();
    }
    return text;
  })().catch((e) => { if (e.name !== 'AbortError') throw e; return ''; });
  return { started, done, stop: () => controller.abort() };
}

async function waitFor(page, fn, what, ms = 60000, ...args) {
  try {
    return await page.waitForFunction(fn, { timeout: ms, polling: 100 }, ...args);
  } catch (e) {
    throw new Error(`${what}: ${e.message}\nserver log tail:\n${stderr.split('\n').slice(-15).join('\n')}`);
  }
}

test('without the key the page asks for it (Basic) and stays closed', async () => {
  const r = await fetch(`${url}/dashboard`);
  assert.equal(r.status, 401);
  assert.match(r.headers.get('www-authenticate') || '', /^Basic realm="baton"/);
  const e = await fetch(`${url}/events`, { headers: { authorization: 'Basic ' + Buffer.from('x:wrong').toString('base64') } });
  assert.equal(e.status, 401);
});

test('the page shows a long prefill beside two decoding streams, step by step', async () => {
  const page = await browser.newPage();
  try {
    await longPrefillBesideStreams(page);
  } finally {
    await page.close();
  }
});

async function longPrefillBesideStreams(page) {
  await page.authenticate({ username: 'operator', password: KEY });
  await page.setViewport({ width: 1280, height: 1000 });
  const consoleErrors = [];
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  await page.goto(`${url}/dashboard`, { waitUntil: 'domcontentloaded' });
  await waitFor(page, () => document.getElementById('conn').dataset.state === 'live', 'the stream connects');
  await waitFor(page, () => window.batonLive.status !== null, 'a status snapshot arrives');

  const a = stream('The first stream says hello.', 3000);
  const b = stream('A second stream, also decoding.', 3000);
  await withTimeout(Promise.all([a.started, b.started]), 60000, 'both streams start');
  const longPrompt = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(53);  // ~3,000 bytes
  const long = stream(longPrompt, 4);

  // While the long prompt prefills: it shows as prefilling, both streams as decoding.
  const seen = await waitFor(page, () => {
    const rows = [...document.querySelectorAll('#requests tbody tr')];
    const cells = (tr) => [...tr.children].map((td) => td.textContent);
    const prefilling = rows.filter((tr) => tr.dataset.state === 'prefilling' && Number(cells(tr)[2]) > 2500);
    const decoding = rows.filter((tr) => tr.dataset.state === 'decoding');
    if (prefilling.length !== 1 || decoding.length < 2) return null;
    return { long: Number(prefilling[0].dataset.req), label: cells(prefilling[0])[1],
             streams: decoding.map((tr) => Number(tr.dataset.req)) };
  }, 'the table shows the long prompt prefilling while the streams decode');
  const state = await seen.jsonValue();
  assert.match(state.label, /^prefilling \d+%$/);
  assert.equal(state.streams.length, 2);

  await withTimeout(long.done, 120000, 'the long request finishes');
  await waitFor(page, (id) => {
    const tr = document.querySelector(`#requests tr[data-req="${id}"]`);
    return tr && tr.dataset.state === 'finished';
  }, 'the long request shows as finished', 30000, state.long);
  // The longest window (a loaded machine may take long over the prefill); let one more render
  // land, then freeze the view so the checks read a still picture.
  await page.select('#window', '180');
  await new Promise((r) => setTimeout(r, 600));
  await page.click('#pause');

  const timeline = await page.evaluate((longId, streams) => {
    const segs = [...document.querySelectorAll('#timeline rect.seg')].map((r) => ({
      step: Number(r.dataset.step), req: Number(r.dataset.req), kind: r.dataset.kind, n: Number(r.dataset.n) }));
    const prefillSteps = [...new Set(segs.filter((s) => s.req === longId && s.kind === 'prefill').map((s) => s.step))];
    const missing = [];
    for (const step of prefillSteps) {
      for (const id of streams) {
        if (!segs.some((s) => s.step === step && s.req === id && s.kind === 'decode' && s.n >= 1)) missing.push({ step, id });
      }
    }
    const prefilled = segs.filter((s) => s.req === longId && s.kind === 'prefill').reduce((t, s) => t + s.n, 0);
    return { prefillSteps: prefillSteps.length, missing, prefilled,
             durations: document.querySelectorAll('#timeline rect.dur').length,
             worstGap: document.getElementById('worst-gap').textContent,
             cause: document.getElementById('worst-gap-cause').textContent,
             stepsTable: document.querySelectorAll('#steps tbody tr').length };
  }, state.long, state.streams);
  assert.ok(timeline.prefillSteps >= 3, `the prefill took ${timeline.prefillSteps} steps on the timeline`);
  assert.ok(timeline.prefilled >= 2900, `the timeline shows ${timeline.prefilled} prefill tokens`);
  assert.deepEqual(timeline.missing, [], 'every prefill step carries both streams\' decode rows');
  assert.ok(timeline.durations > 0);
  assert.match(timeline.worstGap, /^\d+ ms \(r\d+\)$/);
  assert.match(timeline.cause, /^longest step since its previous token: #\d+/);
  assert.ok(timeline.stepsTable > 0);
  if (OUT) {
    // The picture for the README: the last 10 s, where the prefill's steps are wide enough to see.
    await page.click('#pause');
    await page.select('#window', '10');
    await new Promise((r) => setTimeout(r, 400));
    await page.click('#pause');
    await page.screenshot({ path: path.join(OUT, 'dashboard.png'), fullPage: true });
  }

  // A phone-sized screen: nothing wider than the viewport but the scrolling tables and chart.
  await page.click('#pause');
  await page.setViewport({ width: 390, height: 844, isMobile: true });
  await new Promise((r) => setTimeout(r, 700));
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `the page is ${overflow} px wider than a phone's screen`);
  if (OUT) await page.screenshot({ path: path.join(OUT, 'dashboard-phone.png'), fullPage: true });

  a.stop();
  b.stop();
  await Promise.all([a.done, b.done]);
  assert.deepEqual(consoleErrors, []);
}

test('five open pages are five viewers, and closing them frees their slots', async () => {
  const pages = [];
  for (let i = 0; i < 5; i++) {
    const p = await browser.newPage();
    await p.authenticate({ username: 'viewer', password: KEY });
    await p.goto(`${url}/dashboard`, { waitUntil: 'domcontentloaded' });
    pages.push(p);
  }
  for (const p of pages) {
    await waitFor(p, () => window.batonLive.status && window.batonLive.status.viewers === 5,
      'the status counts 5 viewers', 30000).catch(async (e) => {
      const seen = await p.evaluate(() => [document.getElementById('conn').dataset.state,
        window.batonLive.status && window.batonLive.status.viewers]);
      throw new Error(`${e.message}\npage: ${JSON.stringify(seen)}`);
    });
  }
  for (const p of pages.slice(1)) await p.close();
  await waitFor(pages[0], () => window.batonLive.status.viewers === 1, 'closed pages leave', 30000);
  await pages[0].close();
});
