// Starts baton_scripted_server (the real HTTP layer over a scripted backend) for one scenario and
// reads back what it logged. run.sh sets the environment: the server binary, the vocabulary GGUF,
// the chat template and extra server arguments.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const env = process.env;
export const SERVER_BIN = env.BATON_SCRIPTED_SERVER;
export const MODEL = env.BATON_AGENT_MODEL;
export const TEMPLATE = env.BATON_AGENT_TEMPLATE;
export const EXTRA_ARGS = JSON.parse(env.BATON_AGENT_SERVER_ARGS || '[]');
// "qwen": a byte-level BPE vocabulary with Qwen's added tokens and the Qwen 2.5 template;
// "byte": a synthetic byte vocabulary and tests/agents/chatml_hermes.jinja.
export const FLAVOR = env.BATON_AGENT_FLAVOR || 'byte';
export const MODEL_ID = 'scripted';
export const API_KEY = 'sk-scripted';

if (!SERVER_BIN || !MODEL || !TEMPLATE) {
  throw new Error('run these tests through tests/agents/run.sh (BATON_SCRIPTED_SERVER unset)');
}

// Python's json.dumps spacing (", " and ": "), which the templates' tojson produces.
export function pyJson(value) {
  if (Array.isArray(value)) return `[${value.map(pyJson).join(', ')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

// What a model would answer to call `name`: the Hermes markup with Python-style JSON.
export function toolCallText(name, args) {
  return `<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": ${pyJson(args)}}\n</tool_call>`;
}

export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class ScriptedServer {
  static async start(script, { name = 'scenario', args = [] } = {}) {
    const dir = fs.mkdtempSync(path.join(env.BATON_AGENT_WORK || os.tmpdir(), `${name}-`));
    const scriptPath = path.join(dir, 'script.json');
    fs.writeFileSync(scriptPath, JSON.stringify(script, null, 2));
    const s = new ScriptedServer(dir);
    s.logPath = path.join(dir, 'requests.jsonl');
    s.proc = spawn(SERVER_BIN, ['--port', '0', '--model', MODEL, '--chat-template', TEMPLATE,
      '--script', scriptPath, '--log', s.logPath, '--model-id', MODEL_ID, ...EXTRA_ARGS, ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] });
    s.proc.stderr.on('data', (d) => { s.stderr += d; });
    s.exited = new Promise((resolve) => s.proc.on('exit', (code, signal) => resolve({ code, signal })));
    const port = await withTimeout(new Promise((resolve, reject) => {
      let out = '';
      s.proc.stdout.on('data', (d) => {
        out += d;
        const m = /^port=(\d+)$/m.exec(out);
        if (m) resolve(Number(m[1]));
      });
      s.exited.then(({ code, signal }) => reject(new Error(
        `baton_scripted_server exited (${code ?? signal}) before serving:\n${s.stderr}`)));
    }), 20000, 'baton_scripted_server start');
    s.url = `http://127.0.0.1:${port}`;
    s.baseURL = `${s.url}/v1`;
    return s;
  }

  constructor(dir) {
    this.dir = dir;
    this.stderr = '';
  }

  // Every request the backend received so far, in order (one object per JSON line).
  requests() {
    if (!fs.existsSync(this.logPath)) return [];
    return fs.readFileSync(this.logPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  }

  // The last requests and stderr lines, for failure messages.
  tail(n = 3) {
    const reqs = this.requests().slice(-n).map((r) => {
      const p = r.prompt.length > 3000 ? `…${r.prompt.slice(-3000)}` : r.prompt;
      return `#${r.n} rule=${JSON.stringify(r.rule)} max_tokens=${r.max_tokens}\n--- prompt ---\n${p}\n--- reply ---\n${r.reply}`;
    });
    return `server log (${this.logPath}), last ${reqs.length} request(s):\n${reqs.join('\n\n')}\n` +
      `stderr tail:\n${this.stderr.split('\n').slice(-20).join('\n')}`;
  }

  // SIGTERM; a clean exit (0) is part of the contract.
  async stop() {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
    this.proc.kill('SIGTERM');
    const killer = setTimeout(() => this.proc.kill('SIGKILL'), 10000);
    const r = await this.exited;
    clearTimeout(killer);
    return r;
  }
}

// Runs `body(server)` against a fresh server with `script`; a failure carries the server's log
// tail, and the server always stops (and must stop cleanly).
export async function withServer(script, body, opts = {}) {
  const server = await ScriptedServer.start(script, opts);
  let failure = null;
  try {
    await body(server);
  } catch (e) {
    failure = e;
  }
  const { code, signal } = await server.stop();
  if (failure) {
    failure.message += `\n\n${server.tail()}`;
    throw failure;
  }
  if (code !== 0) {
    throw new Error(`baton_scripted_server exited with ${code ?? signal} after SIGTERM\n${server.tail()}`);
  }
  return server;
}

// Runs a command to its end (SIGKILL after timeoutMs): { code, signal, stdout, stderr }.
export function runProcess(cmd, args, opts, timeoutMs) {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

// A CLI run's outcome for failure messages: exit status, stdout, the tail of stderr.
export function describeRun(r, lines = 40) {
  return `exit ${r.code ?? r.signal}\n--- stdout ---\n${r.stdout}\n--- stderr tail ---\n${
    r.stderr.split('\n').slice(-lines).join('\n')}`;
}

// The events of a server-sent-event body: [{ event, data }] with data parsed as JSON.
export function parseSse(text) {
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event = null;
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (!data.length) continue;
    const joined = data.join('\n');
    events.push({ event, data: joined === '[DONE]' ? joined : JSON.parse(joined) });
  }
  return events;
}

// The environment a CLI under test gets: nothing of ours but PATH, plus `extra` (HOME and the
// switches that keep it offline).
export function cliEnv(extra) {
  return { PATH: process.env.PATH, NO_COLOR: '1', ...extra };
}
