// Anthropic's Claude Code (`claude -p`, the native binary of npm
// @anthropic-ai/claude-code-linux-x64) with ANTHROPIC_BASE_URL at the scripted server's
// /v1/messages: a plain turn, and a turn whose Bash tool call Claude Code runs (allowed with
// --allowedTools Bash) before sending the tool_result back. Offline:
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (without it Claude Code sends HEAD /api/hello and
// looks up api.anthropic.com), DISABLE_TELEMETRY, DISABLE_AUTOUPDATER, DISABLE_ERROR_REPORTING;
// HOME is a temp dir; loopback is all it reaches.
// The replay tests send the two requests Claude Code 2.1.332 sent in such a turn (fixtures/,
// captured from the real CLI: POST /v1/messages?beta=true, a role "system" message inside
// `messages`, adaptive thinking, cache_control, a deferred tool) and check the streamed answers
// as Claude Code reads them. They run on every platform, also where the binary is not installed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

import {
  API_KEY, MODEL_ID, cliEnv, describeRun, parseSse, runProcess, toolCallText, withServer,
  withTimeout,
} from './helpers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// The platform package itself: the @anthropic-ai/claude-code wrapper needs node >= 22 (npm ci
// leaves it out on older nodes) and only copies this binary over its own placeholder.
const CLAUDE = path.join(HERE, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
const skip = fs.existsSync(CLAUDE) ? false : `no Claude Code binary for this platform (${CLAUDE})`;

async function claude(server, prompt, extraArgs = []) {
  const project = fs.mkdtempSync(path.join(process.env.BATON_AGENT_WORK, 'claude-project-'));
  const home = path.join(project, '.home');
  fs.mkdirSync(home);
  const env = cliEnv({
    HOME: home,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
  });
  // The prompt goes first: --allowedTools takes every argument after it.
  const r = await runProcess(CLAUDE, ['-p', prompt, '--model', MODEL_ID, '--output-format', 'json',
    '--no-session-persistence', ...extraArgs], { cwd: project, env }, 120000);
  const out = describeRun(r);
  assert.equal(r.code, 0, out);
  let result;
  try {
    result = JSON.parse(r.stdout);
  } catch (e) {
    assert.fail(`--output-format json printed no JSON (${e.message})\n${out}`);
  }
  return { project, result, out };
}

test('claude -p: a plain turn', { skip }, async () => {
  const script = { rules: [{ name: 'hello', contains: ['Say hello to baton'], reply: 'Hello, baton.' }] };
  await withServer(script, async (server) => {
    const { result, out } = await claude(server, 'Say hello to baton.');
    assert.equal(result.is_error, false, out);
    assert.equal(result.result, 'Hello, baton.', out);
    const reqs = server.requests();
    assert.deepEqual(reqs.map((q) => q.rule), ['hello'], out);
    // Claude Code's own system prompt and tools reached the template.
    assert.ok(reqs[0].prompt.includes('"name": "Bash"'), 'the Bash tool is offered');
    assert.ok(reqs[0].prompt.includes('Primary working directory:'),
      'the environment, sent as a role "system" message inside messages, is in the prompt');
  }, { name: 'claude-plain' });
});

test('claude -p --allowedTools Bash: runs a command and answers', { skip }, async () => {
  const command = 'echo hello from baton > greeting.txt';
  const script = { rules: [
    { name: 'final', contains: ['<tool_response>', 'Bash completed with no output'],
      reply: 'I created greeting.txt.' },
    { name: 'call', contains: ['Create greeting.txt'], not_contains: ['<tool_response>'],
      reply: `I will write the file.\n${toolCallText('Bash', { command, description: 'Write the greeting file' })}` },
  ] };
  await withServer(script, async (server) => {
    const { project, result, out } = await claude(server,
      'Create greeting.txt saying hello from baton.', ['--allowedTools', 'Bash']);
    assert.equal(fs.readFileSync(path.join(project, 'greeting.txt'), 'utf8'), 'hello from baton\n',
      `Claude Code ran the command in the project\n${out}`);
    assert.equal(result.result, 'I created greeting.txt.', out);
    assert.equal(result.num_turns, 2, out);
    const reqs = server.requests();
    assert.deepEqual(reqs.map((q) => q.rule), ['call', 'final'], out);
    const p = reqs[1].prompt;
    assert.ok(p.includes(toolCallText('Bash', { command, description: 'Write the greeting file' })),
      'the call is in the history as the template renders it');
  }, { name: 'claude-tool' });
});

function fixture(name) {
  return JSON.parse(fs.readFileSync(path.join(HERE, 'fixtures', name), 'utf8'));
}

// POSTs a captured Claude Code request (its model replaced by ours) the way Claude Code does.
async function post(server, route, body) {
  const res = await withTimeout(fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-api-key': API_KEY,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14,effort-2025-11-24',
      'x-app': 'cli',
      'user-agent': 'claude-cli/2.1.332 (external, sdk-cli)',
    },
    body: JSON.stringify({ ...body, model: MODEL_ID }),
  }), 30000, `POST ${route}`);
  const text = await withTimeout(res.text(), 30000, 'reading the answer');
  assert.equal(res.status, 200, text);
  return { res, text };
}

// A streamed message as Claude Code assembles it: the blocks with their deltas applied.
async function replay(server, body) {
  const { res, text } = await post(server, '/v1/messages?beta=true', body);
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  const evs = parseSse(text).filter((e) => e.event !== 'ping');
  for (const e of evs) assert.equal(e.data.type, e.event, 'the event name is the data type');
  const names = evs.map((e) => e.event);
  assert.equal(names[0], 'message_start', names.join(' '));
  assert.deepEqual(names.slice(-2), ['message_delta', 'message_stop'], names.join(' '));
  const blocks = [];
  for (const { data } of evs) {
    if (data.type === 'content_block_start') blocks[data.index] = { ...data.content_block, json: '' };
    if (data.type === 'content_block_delta') {
      const b = blocks[data.index];
      if (data.delta.type === 'text_delta') b.text += data.delta.text;
      else if (data.delta.type === 'input_json_delta') b.json += data.delta.partial_json;
      else assert.fail(`unexpected delta ${data.delta.type}`);
    }
  }
  return { blocks, stop: evs.at(-2).data.delta.stop_reason, usage: evs[0].data.message.usage };
}

test('replay of Claude Code\'s requests: tool_use, then the answer to its tool_result', async () => {
  const turn1 = fixture('claude-code-turn1.json');
  const turn2 = fixture('claude-code-turn2.json');
  assert.ok(turn1.messages.some((m) => m.role === 'system'), 'the fixture has a system message');
  const script = { rules: [
    { name: 'final', contains: ['<tool_response>', 'Bash completed with no output'], reply: 'Done.' },
    { name: 'call', contains: ['CREATE_FILE please'], not_contains: ['<tool_response>'],
      reply: toolCallText('Bash', { command: 'echo hi > out.txt', description: 'Write hi to out.txt' }) },
  ] };
  await withServer(script, async (server) => {
    const first = await replay(server, turn1);
    assert.equal(first.stop, 'tool_use');
    const uses = first.blocks.filter((b) => b.type === 'tool_use');
    assert.equal(uses.length, 1, JSON.stringify(first.blocks));
    assert.equal(uses[0].name, 'Bash');
    assert.match(uses[0].id, /^[A-Za-z0-9_-]+$/, 'an id tool_result can name');
    assert.deepEqual(JSON.parse(uses[0].json),
      { command: 'echo hi > out.txt', description: 'Write hi to out.txt' });
    assert.ok(first.usage.input_tokens > 0, JSON.stringify(first.usage));

    const second = await replay(server, turn2);
    assert.equal(second.stop, 'end_turn');
    assert.deepEqual(second.blocks.filter((b) => b.type !== 'thinking').map((b) => [b.type, b.text]),
      [['text', 'Done.']]);

    const reqs = server.requests();
    assert.deepEqual(reqs.map((q) => q.rule), ['call', 'final']);
    assert.ok(reqs[0].prompt.includes('"name": "Bash"'), 'the tools are offered');
    assert.ok(reqs[0].prompt.includes('Primary working directory: /home/user/project'),
      'the role "system" message inside messages is rendered, not dropped');
    assert.ok(reqs[0].max_tokens <= 32000, `max_tokens ${reqs[0].max_tokens}`);

    // count_tokens on the same conversation: the prompt tokens the first request used.
    const { text } = await post(server, '/v1/messages/count_tokens', {
      system: turn1.system, messages: turn1.messages, tools: turn1.tools, thinking: turn1.thinking,
    });
    assert.equal(JSON.parse(text).input_tokens, reqs[0].prompt_tokens, text);
    assert.equal(server.requests().length, 2, 'counting generates nothing');
  }, { name: 'claude-replay' });
});
