// Shared setup for the structured-output tests: starting `baton serve` on a model, posting
// requests, a bounded-concurrency pool, and ajv validators for the schemas in schemas/.
// run.sh sets the environment: the baton binary, the models and a scratch folder.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const env = process.env;
export const BATON = env.BATON_BIN;
// A random-weight llama: ../shared's llama-2-tiny-random.gguf (32,000-token Llama-2 vocabulary)
// or, without ../shared, a `baton gguf synth` byte-vocabulary model.
export const RANDOM_MODEL = env.BATON_RANDOM_MODEL;
// stories260K.gguf (real trained weights), or '' when ../shared lacks it.
export const STORIES_MODEL = env.BATON_STORIES_MODEL || '';
export const PARALLEL = Number(env.BATON_ST_PARALLEL || 4);
// Requests in flight at once from the client: a few more than the server runs, so its batch
// never waits on the client.
export const CONCURRENCY = Number(env.BATON_ST_CONCURRENCY || PARALLEL * 2);
// Room for the prompt within stories260K's 2048-token context.
export const MAX_TOKENS = Number(env.BATON_ST_MAX_TOKENS || 1536);
// The model id the servers answer to (--alias).
export const MODEL_ID = 'test';

if (!BATON || !RANDOM_MODEL) {
  throw new Error('run these tests through tests/structured/run.sh (BATON_BIN unset)');
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SCHEMA_DIR = path.join(HERE, 'schemas');

// The models the sample tests run against: [{ name, path }] (stories only when present).
export function models() {
  const list = [{ name: 'random', path: RANDOM_MODEL }];
  if (STORIES_MODEL) list.push({ name: 'stories260K', path: STORIES_MODEL });
  return list;
}

// Every schema in schemas/, sorted by file name: [{ name, file, schema }].
export function loadSchemas() {
  return fs.readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.json')).sort().map((f) => ({
    name: f.replace(/\.json$/, ''),
    file: f,
    schema: JSON.parse(fs.readFileSync(path.join(SCHEMA_DIR, f), 'utf8')),
  }));
}

// An ajv validate function for `schema`: draft-07 when its $schema says so, else 2020-12;
// formats in ajv-formats' full mode (calendar-checked dates, RFC 3339 times with an offset).
export function compileValidator(schema) {
  const draft07 = typeof schema.$schema === 'string' && schema.$schema.includes('draft-07');
  const opts = { strict: true, strictTypes: false, strictTuples: false, allowUnionTypes: true, allErrors: true };
  const ajv = draft07 ? new Ajv(opts) : new Ajv2020(opts);
  addFormats.default ? addFormats.default(ajv) : addFormats(ajv);
  return ajv.compile(schema);
}

export function describeErrors(validate) {
  return (validate.errors || []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
}

export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// `baton serve` on a free loopback port (--port 0; the port is read from its first stdout line).
export class BatonServer {
  static async start(model, args = []) {
    const s = new BatonServer();
    s.model = model;
    s.proc = spawn(BATON, ['serve', '-m', model, '--port', '0', '--parallel', String(PARALLEL),
      '--keepalive-s', '1', '--alias', MODEL_ID, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    s.stderr = '';
    s.proc.stderr.on('data', (d) => {
      s.stderr += d;
      if (s.stderr.length > 200000) s.stderr = s.stderr.slice(-100000);
    });
    s.exited = new Promise((resolve) => s.proc.on('exit', (code, signal) => resolve({ code, signal })));
    const port = await withTimeout(new Promise((resolve, reject) => {
      let out = '';
      s.proc.stdout.on('data', (d) => {
        out += d;
        const m = /^baton serve: http:\/\/[^:\s]+:(\d+)/m.exec(out);
        if (m) resolve(Number(m[1]));
      });
      s.exited.then(({ code, signal }) => reject(new Error(
        `baton serve exited (${code ?? signal}) before serving:\n${s.stderr}`)));
    }), 60000, 'baton serve start');
    s.url = `http://127.0.0.1:${port}`;
    s.baseURL = `${s.url}/v1`;
    return s;
  }

  stderrTail(n = 20) {
    return this.stderr.split('\n').slice(-n).join('\n');
  }

  // POST a JSON body; { status, body (parsed JSON or null), text }.
  async post(route, body) {
    const r = await fetch(`${this.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await r.text();
    let json = null;
    try { json = JSON.parse(text); } catch { /* not JSON */ }
    return { status: r.status, body: json, text };
  }

  // POST with stream: true; the SSE events' JSON payloads in order, and whether [DONE] came.
  async postStream(route, body) {
    const r = await fetch(`${this.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
    });
    const text = await r.text();
    if (r.status !== 200) return { status: r.status, events: [], done: false, text };
    const events = [];
    let done = false;
    for (const block of text.split(/\r?\n\r?\n/)) {
      const data = block.split(/\r?\n/).filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, '')).join('\n');
      if (!data) continue;
      if (data === '[DONE]') { done = true; continue; }
      events.push(JSON.parse(data));
    }
    return { status: r.status, events, done, text };
  }

  async health() {
    const r = await fetch(`${this.url}/health`);
    return r.status;
  }

  // SIGTERM; a clean exit (0) is part of the contract.
  async stop() {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
    this.proc.kill('SIGTERM');
    const killer = setTimeout(() => this.proc.kill('SIGKILL'), 15000);
    const r = await this.exited;
    clearTimeout(killer);
    return r;
  }
}

// Runs `fn(item, index)` over `items` with at most `limit` at once, in order; one promise per
// item, resolved as soon as that item is done. A rejection resolves as { error }.
export function poolEach(items, limit, fn) {
  const settle = items.map(() => {
    let resolve;
    const promise = new Promise((r) => { resolve = r; });
    return { promise, resolve };
  });
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const i = next++;
      try {
        settle[i].resolve(await fn(items[i], i));
      } catch (error) {
        settle[i].resolve({ error });
      }
    }
  }
  for (let w = 0; w < Math.min(limit, items.length); w++) worker();
  return settle.map((x) => x.promise);
}

// poolEach, awaited: the results in input order.
export function pool(items, limit, fn) {
  return Promise.all(poolEach(items, limit, fn));
}

// A chat request asking for JSON; the models ignore the words, the constraint does the work.
export function chatBody(extra, { seed = 0, prompt = 'Reply with the requested JSON.' } = {}) {
  return {
    model: MODEL_ID,
    messages: [{ role: 'user', content: prompt }],
    temperature: 1,
    seed,
    max_tokens: MAX_TOKENS,
    ...extra,
  };
}

export function jsonSchemaFormat(name, schema) {
  return { type: 'json_schema', json_schema: { name, schema, strict: true } };
}

// Text for an assertion message: long outputs keep their head and tail.
export function clip(text, n = 1500) {
  if (typeof text !== 'string') return String(text);
  return text.length <= n ? text : `${text.slice(0, n / 2)} …[${text.length - n} chars]… ${text.slice(-n / 2)}`;
}
