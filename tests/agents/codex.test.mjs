// OpenAI's Codex CLI (`codex exec`, npm @openai/codex) with a custom model provider on the
// scripted server's /v1/responses: the agent calls Codex's own `exec_command` shell tool, Codex
// runs it, sends a function_call_output back and prints the final answer. Offline: CODEX_HOME is
// a temp dir whose config.toml turns off the update check, analytics, feedback, OpenTelemetry
// export, web search and the plugin/app sync (without them Codex looks up ab.chatgpt.com and
// api.github.com); loopback is all it reaches.
// The replay tests send the two requests Codex 0.171.0 sent in such a turn (fixtures/, captured
// from the real CLI) and check the answers carry what Codex reads: every output item in a
// response.output_item.done event and a final response.completed with usage. They run on every
// platform, also where the native binary is not installed.
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

// The native binary from the platform package (@openai/codex-<platform>-<arch>, an alias of
// @openai/codex@<version>-<platform>-<arch>): vendor/<target triple>/bin/codex.
function codexBinary() {
  const vendor = path.join(HERE, 'node_modules', '@openai', `codex-${process.platform}-${process.arch}`,
    'vendor');
  if (!fs.existsSync(vendor)) return null;
  for (const triple of fs.readdirSync(vendor)) {
    const bin = path.join(vendor, triple, 'bin', process.platform === 'win32' ? 'codex.exe' : 'codex');
    if (fs.existsSync(bin)) return bin;
  }
  return null;
}

const CODEX = codexBinary();
const skip = CODEX ? false : `no Codex binary for ${process.platform}-${process.arch}`;

function config(baseURL) {
  return `model = "${MODEL_ID}"
model_provider = "baton"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.baton]
name = "baton (scripted)"
base_url = "${baseURL}"
wire_api = "responses"
env_key = "BATON_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"

[features]
plugins = false
remote_plugin = false
apps = false
`;
}

const COMMAND = 'echo hello from baton > greeting.txt';

test('codex exec: runs a shell command through exec_command and answers', { skip }, async () => {
  const project = fs.mkdtempSync(path.join(process.env.BATON_AGENT_WORK, 'codex-project-'));
  const home = path.join(project, '.home');
  const codexHome = path.join(home, '.codex');
  fs.mkdirSync(codexHome, { recursive: true });
  const lastMessage = path.join(home, 'last-message.txt');

  const script = { rules: [
    { name: 'final', contains: ['<tool_response>', 'Process exited with code 0'],
      reply: 'I created greeting.txt.' },
    { name: 'call', contains: ['Create greeting.txt'], not_contains: ['<tool_response>'],
      reply: `I will write the file.\n${toolCallText('exec_command', { cmd: COMMAND })}` },
  ] };
  await withServer(script, async (server) => {
    fs.writeFileSync(path.join(codexHome, 'config.toml'), config(server.baseURL));
    const env = cliEnv({ HOME: home, CODEX_HOME: codexHome, BATON_API_KEY: API_KEY });
    // exec mode never asks for approval; its default sandbox is read-only, and workspace-write
    // needs user namespaces (bubblewrap), which not every CI container has: the command is the
    // script's own and runs in the temp project.
    const r = await runProcess(CODEX, ['exec', '--skip-git-repo-check', '--ephemeral',
      '--dangerously-bypass-approvals-and-sandbox', '--color', 'never', '-o', lastMessage,
      'Create greeting.txt saying hello from baton.'], { cwd: project, env }, 120000);
    const out = describeRun(r);
    assert.equal(r.code, 0, out);
    assert.equal(fs.readFileSync(path.join(project, 'greeting.txt'), 'utf8'), 'hello from baton\n',
      `Codex ran the command in the project\n${out}`);
    assert.equal(fs.readFileSync(lastMessage, 'utf8').trim(), 'I created greeting.txt.', out);
    assert.ok(r.stdout.includes('I created greeting.txt.'), out);

    const reqs = server.requests();
    assert.deepEqual(reqs.map((q) => q.rule), ['call', 'final'], out);
    assert.ok(reqs[0].prompt.includes('"name": "exec_command"'), 'Codex\'s shell tool is offered');
    assert.ok(reqs[0].prompt.includes('You are a coding agent running in the Codex CLI'),
      'Codex\'s developer message is in the prompt');
    const p = reqs[1].prompt;
    assert.ok(p.includes(toolCallText('exec_command', { cmd: COMMAND })),
      'the call is in the history as the template renders it');
    assert.match(p.slice(p.indexOf('<tool_response>')), /Process exited with code 0/,
      'the command\'s outcome comes back as the tool output');
  }, { name: 'codex' });
});

function fixture(name) {
  return JSON.parse(fs.readFileSync(path.join(HERE, 'fixtures', name), 'utf8'));
}

// POSTs a captured Codex request (its model replaced by ours) with Codex's headers; the events.
async function replay(server, body) {
  const res = await withTimeout(fetch(`${server.baseURL}/responses`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${API_KEY}`,
      originator: 'codex_exec',
      'user-agent': 'codex_exec/0.171.0',
    },
    body: JSON.stringify({ ...body, model: MODEL_ID }),
  }), 30000, 'POST /v1/responses');
  const text = await withTimeout(res.text(), 30000, 'reading the stream');
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  const evs = parseSse(text);
  for (const e of evs) assert.equal(e.data.type, e.event, 'the event name is the data type');
  const completed = evs.at(-1);
  assert.equal(completed?.event, 'response.completed', `ends with response.completed: ${
    evs.map((e) => e.event)}`);
  const u = completed.data.response.usage;
  assert.ok(u.input_tokens > 0 && u.output_tokens > 0 && u.total_tokens === u.input_tokens + u.output_tokens,
    JSON.stringify(u));
  // What Codex records: the items of response.output_item.done, nothing else.
  return evs.filter((e) => e.event === 'response.output_item.done').map((e) => e.data.item);
}

test('replay of Codex\'s requests: the call and the answer as Codex reads them', async () => {
  const turn1 = fixture('codex-turn1.json');
  const turn2 = fixture('codex-turn2.json');
  // Shapes Codex sends that plain clients do not: the namespace tool, developer messages with
  // item ids, store/include/reasoning/client_metadata.
  assert.ok(turn1.tools.some((t) => t.type === 'namespace'), 'the fixture has the namespace tool');
  const script = { rules: [
    { name: 'final', contains: ['<tool_response>', 'Process exited with code 0'], reply: 'Done.' },
    { name: 'call', contains: ['CREATE_FILE please'], not_contains: ['<tool_response>'],
      reply: toolCallText('exec_command', { cmd: 'echo hi > out.txt' }) },
  ] };
  await withServer(script, async (server) => {
    const items = await replay(server, turn1);
    assert.equal(items.length, 1, JSON.stringify(items));
    const [call] = items;
    assert.equal(call.type, 'function_call');
    assert.equal(call.name, 'exec_command');
    assert.ok(call.call_id && call.id, JSON.stringify(call));
    assert.deepEqual(JSON.parse(call.arguments), { cmd: 'echo hi > out.txt' });

    const answer = await replay(server, turn2);
    assert.deepEqual(answer.map((i) => [i.type, i.role]), [['message', 'assistant']]);
    assert.deepEqual(answer[0].content.map((c) => [c.type, c.text]), [['output_text', 'Done.']]);

    const reqs = server.requests();
    assert.deepEqual(reqs.map((q) => q.rule), ['call', 'final']);
    assert.ok(reqs[0].prompt.includes('"name": "exec_command"'));
    assert.ok(reqs[0].prompt.includes('<cwd>/home/user/project</cwd>'), 'user messages rendered');
  }, { name: 'codex-replay' });
});
