// Forced tool calls: with tool_choice "required" or a named function, every one of 50 seeded
// samples at temperature 1 is a parseable call (message.tool_calls, finish_reason "tool_calls")
// to one of the offered tools, whose arguments validate against its parameters (ajv). One
// server per tool-call family that has a call grammar (--tool-call-format), on the
// random-weight model, where nothing but the grammar makes the call valid.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BatonServer, CONCURRENCY, MODEL_ID, RANDOM_MODEL, clip, compileValidator, describeErrors, pool } from './helpers.mjs';

const SAMPLES = Number(process.env.BATON_ST_SAMPLES || 50);
const FAMILIES = ['hermes', 'llama3', 'mistral', 'kimi-k2', 'functionary', 'solar-open'];

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', maxLength: 16 },
          unit: { enum: ['celsius', 'fahrenheit'] },
          days: { type: 'integer', minimum: 1, maximum: 7 },
        },
        required: ['city', 'unit'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'create_event',
      parameters: {
        type: 'object',
        properties: {
          title: { type: 'string', maxLength: 20 },
          date: { type: 'string', format: 'date' },
          attendees: { type: 'array', items: { type: 'string', format: 'email', maxLength: 24 }, maxItems: 2 },
        },
        required: ['title', 'date'],
      },
    },
  },
];
// Strings and an array without bounds: only the max_tokens plan closes them in time.
const OPEN_TOOL = {
  type: 'function',
  function: {
    name: 'save_note',
    parameters: {
      type: 'object',
      properties: {
        title: { type: 'string' },
        body: { type: 'string' },
        labels: { type: 'array', items: { type: 'string' } },
      },
      required: ['title', 'body', 'labels'],
      additionalProperties: false,
    },
  },
};
const validators = Object.fromEntries([...TOOLS, OPEN_TOOL].map((t) => [t.function.name, compileValidator(t.function.parameters)]));
const BUDGET_SAMPLES = Number(process.env.BATON_ST_BUDGET_SAMPLES || 40);

function body(seed, tool_choice, parallel = true) {
  return {
    model: MODEL_ID,
    messages: [{ role: 'user', content: 'What is the weather in Oslo? Then book lunch.' }],
    tools: TOOLS,
    tool_choice,
    parallel_tool_calls: parallel,
    temperature: 1,
    seed,
    max_tokens: 1536,
  };
}

// null when the answer is a good forced call, else what is wrong with it.
function judge(r, seed, onlyTool, single) {
  if (r.error || r.status !== 200) return `seed ${seed}: ${r.error?.message ?? `HTTP ${r.status} ${clip(r.text)}`}`;
  const c = r.body.choices[0];
  const calls = c.message.tool_calls ?? [];
  if (c.finish_reason !== 'tool_calls' || calls.length === 0) {
    return `seed ${seed}: finish_reason ${c.finish_reason}, ${calls.length} calls, content ${clip(JSON.stringify(c.message.content))}`;
  }
  if (single && calls.length !== 1) return `seed ${seed}: ${calls.length} calls with parallel_tool_calls false`;
  for (const call of calls) {
    const name = call.function.name;
    if (!validators[name] || (onlyTool && name !== onlyTool)) return `seed ${seed}: call to ${name}`;
    let args;
    try {
      args = JSON.parse(call.function.arguments);
    } catch (e) {
      return `seed ${seed}: arguments not JSON (${e.message}): ${clip(call.function.arguments)}`;
    }
    if (!validators[name](args)) {
      return `seed ${seed}: ${name} arguments invalid (${describeErrors(validators[name])}): ${clip(call.function.arguments)}`;
    }
  }
  return null;
}

for (const family of FAMILIES) {
  describe(`forced tool calls in the ${family} format`, () => {
    let server;
    before(async () => {
      server = await BatonServer.start(RANDOM_MODEL, ['--tool-call-format', family]);
    });
    after(async () => {
      const { code, signal } = await server.stop();
      assert.equal(code, 0, `baton serve exited with ${code ?? signal}\n${server.stderrTail()}`);
    });

    test(`tool_choice "required": ${SAMPLES} samples are valid calls`, async () => {
      const seeds = [...Array(SAMPLES).keys()];
      const rs = await pool(seeds, CONCURRENCY, (seed) => server.post('/v1/chat/completions', body(seed, 'required')));
      const bad = rs.map((r, seed) => judge(r, seed, null, false)).filter(Boolean);
      assert.equal(bad.length, 0, `${bad.length}/${SAMPLES} failed:\n${bad.slice(0, 4).join('\n')}`);
    });

    test('a named function, one call only: every sample calls exactly that tool', async () => {
      const seeds = [...Array(10).keys()];
      const choice = { type: 'function', function: { name: 'create_event' } };
      const rs = await pool(seeds, CONCURRENCY, (seed) => server.post('/v1/chat/completions', body(seed, choice, false)));
      const bad = rs.map((r, seed) => judge(r, seed, 'create_event', true)).filter(Boolean);
      assert.equal(bad.length, 0, `${bad.length}/10 failed:\n${bad.slice(0, 4).join('\n')}`);
    });

    test('a forced call with unbounded arguments ends valid from the shortest call up to 4x it', async () => {
      const forced = (seed, max_tokens) => ({
        ...body(seed, { type: 'function', function: { name: 'save_note' } }, false),
        tools: [OPEN_TOOL],
        max_tokens,
      });
      const refused = await server.post('/v1/chat/completions', forced(0, 1));
      assert.equal(refused.status, 400, refused.text);
      const minimum = Number(/takes (\d+) tokens/.exec(refused.body.error.message)?.[1]);
      assert.ok(minimum > 1 && minimum < 300, refused.body.error.message);
      const budgets = [...Array(BUDGET_SAMPLES).keys()].map((seed) => minimum + (seed % (3 * minimum + 1)));
      const rs = await pool([...budgets.keys()], CONCURRENCY, (seed) => server.post('/v1/chat/completions', forced(seed, budgets[seed])));
      const bad = rs.map((r, seed) => judge(r, seed, 'save_note', true)).filter(Boolean);
      assert.equal(bad.length, 0, `${bad.length}/${BUDGET_SAMPLES} failed (shortest call ${minimum} tokens):\n${bad.slice(0, 4).join('\n')}`);
    });

    test('streamed: the call deltas assemble into a valid call', async () => {
      const r = await server.postStream('/v1/chat/completions', { ...body(3, 'required', false), stream: true });
      assert.equal(r.status, 200, r.text);
      let name = '';
      let args = '';
      let finish = null;
      for (const e of r.events) {
        for (const c of e.choices ?? []) {
          for (const d of c.delta?.tool_calls ?? []) {
            name += d.function?.name ?? '';
            args += d.function?.arguments ?? '';
          }
          if (c.finish_reason) finish = c.finish_reason;
        }
      }
      assert.equal(finish, 'tool_calls');
      assert.ok(validators[name], `streamed call to ${JSON.stringify(name)}`);
      assert.ok(validators[name](JSON.parse(args)), `${args}: ${describeErrors(validators[name])}`);
    });
  });
}
