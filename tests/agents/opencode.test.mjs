// OpenCode (`opencode run`, npm opencode-ai) with a custom OpenAI-compatible provider pointing at
// the scripted server: the agent turn calls OpenCode's own `read` tool, OpenCode runs it and
// sends the result back, the next reply is the final text. Offline: HOME and the XDG folders
// are a fresh temp dir and the OPENCODE_DISABLE_* switches stop the update check, the models.dev
// fetch, default plugins, LSP downloads and sharing (loopback is all it reaches).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

import {
  API_KEY, MODEL_ID, cliEnv, describeRun, runProcess, toolCallText, withServer,
} from './helpers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// The platform package itself (the opencode-ai wrapper lists every platform as optional, and
// not all of them are in every registry mirror, which breaks `npm ci`); other platforms skip.
const OPENCODE = path.join(HERE, 'node_modules', 'opencode-linux-x64', 'bin', 'opencode');
const SECRET = 'the launch code is PLUM-7731';

const skip = fs.existsSync(OPENCODE) ? false : `no OpenCode binary for this platform (${OPENCODE})`;

test('opencode run: reads a file through the read tool and answers', { skip }, async () => {
  const project = fs.mkdtempSync(path.join(process.env.BATON_AGENT_WORK, 'opencode-project-'));
  const home = path.join(project, '.home');
  fs.mkdirSync(home);
  const notes = path.join(project, 'notes.txt');
  fs.writeFileSync(notes, `Project notes\n${SECRET}\n`);

  const script = { rules: [
    // Session titles come from a separate small-model request.
    { name: 'title', contains: ['title generator'], reply: 'Reading the notes' },
    { name: 'final', contains: ['You are opencode', '<tool_response>', 'PLUM-7731'],
      reply: 'The notes say: the launch code is PLUM-7731.' },
    { name: 'agent', contains: ['You are opencode'],
      reply: `I will read the notes.\n${toolCallText('read', { filePath: notes })}` },
  ] };
  await withServer(script, async (server) => {
    fs.writeFileSync(path.join(project, 'opencode.json'), JSON.stringify({
      $schema: 'https://opencode.ai/config.json',
      provider: {
        baton: {
          npm: '@ai-sdk/openai-compatible',
          name: 'baton (scripted)',
          options: { baseURL: server.baseURL, apiKey: API_KEY },
          models: { [MODEL_ID]: { name: 'scripted', tool_call: true } },
        },
      },
      model: `baton/${MODEL_ID}`,
      small_model: `baton/${MODEL_ID}`,
      autoupdate: false,
      share: 'disabled',
    }, null, 2));
    const env = cliEnv({
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      XDG_DATA_HOME: path.join(home, '.local', 'share'),
      XDG_CACHE_HOME: path.join(home, '.cache'),
      XDG_STATE_HOME: path.join(home, '.local', 'state'),
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      OPENCODE_DISABLE_SHARE: '1',
      OPENCODE_DISABLE_CLAUDE_CODE: '1',
    });
    const r = await runProcess(OPENCODE, ['run', '--print-logs', 'What do the notes in notes.txt say?'],
      { cwd: project, env }, 120000);
    const out = describeRun(r);
    assert.equal(r.code, 0, out);
    assert.ok(r.stdout.includes('The notes say: the launch code is PLUM-7731.'), out);

    const reqs = server.requests();
    const rules = reqs.map((q) => q.rule);
    assert.ok(rules.includes('agent') && rules.includes('final'), `rules: ${rules}\n${out}`);
    const agent = reqs.find((q) => q.rule === 'agent');
    // OpenCode's own tools (this pinned version offers these ten), rendered by the template.
    const tools = ['bash', 'edit', 'glob', 'grep', 'read', 'skill', 'task', 'todowrite', 'webfetch',
      'write'];
    const missing = tools.filter((name) => !agent.prompt.includes(`"name": "${name}"`));
    assert.deepEqual(missing, [], 'every tool is offered in the rendered prompt');
    const final = reqs.find((q) => q.rule === 'final');
    assert.ok(final.prompt.includes(toolCallText('read', { filePath: notes })),
      'the read call is in the history as the template renders it');
    const response = final.prompt.slice(final.prompt.indexOf('<tool_response>'));
    assert.ok(response.includes(SECRET), 'the tool result carries the file content');
  }, { name: 'opencode' });
});
