// Shared setup for the npm client tests: the OpenAI client pointed at the running baton serve,
// and the reference text from `baton run --temp 0 --json`.
import { execFileSync } from 'node:child_process';
import OpenAI from 'openai';

export const baseURL = process.env.BATON_URL;
export const exact = process.env.BATON_EXACT === '1';

export function client(options = {}) {
  return new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'unused', maxRetries: 0, ...options });
}

export async function getJson(path) {
  const r = await fetch(`${baseURL}${path}`);
  if (r.status !== 200) throw new Error(`${path}: HTTP ${r.status}`);
  return r.json();
}

// The text `baton run` generates for this prompt, greedily.
export function runText(prompt, n) {
  const out = execFileSync(
    process.env.BATON_BIN,
    ['run', '-m', process.env.BATON_MODEL, '-p', prompt, '-n', String(n), '--temp', '0', '--json'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  );
  return JSON.parse(out).text;
}

// The chat prompt baton serve builds for a model without a chat template or <|im_start|>
// (its default transcript template, server/default_templates.h).
export function plainChatPrompt(messages) {
  const role = (r) => (r === 'system' || r === 'developer' ? 'System'
    : r === 'assistant' ? 'Assistant' : r === 'tool' ? 'Tool' : 'User');
  return messages.map((m) => `${role(m.role)}: ${m.content}\n`).join('') + 'Assistant:';
}

// Waits until /status lists no running or waiting request.
export async function waitIdle(timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  let s;
  while (Date.now() < deadline) {
    s = await getJson('/status');
    if (s.running.length === 0 && s.waiting.length === 0 && s.kv.blocks_used === 0) return s;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`server not idle: ${JSON.stringify(s)}`);
}

export async function cancelledCount() {
  const s = await getJson('/status');
  return s.totals.requests.cancelled ?? 0;
}
