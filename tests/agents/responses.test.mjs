// The `openai` npm SDK's Responses API (`client.responses.create`) against the scripted server:
// plain and streamed text (every event type, in order), function tools and the
// function_call_output round trip, a streamed call, and text.format json_schema.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';

import { API_KEY, MODEL_ID, toolCallText, withServer, withTimeout } from './helpers.mjs';

const WEATHER = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

function client(server) {
  return new OpenAI({ apiKey: API_KEY, baseURL: server.baseURL, timeout: 30000, maxRetries: 0 });
}

function create(server, body) {
  return withTimeout(client(server).responses.create({ model: MODEL_ID, ...body }), 30000,
    'responses.create');
}

// Every event of a streamed response, in arrival order.
async function events(stream) {
  const out = [];
  await withTimeout((async () => {
    for await (const ev of stream) out.push(ev);
  })(), 30000, 'reading the stream');
  return out;
}

// The order a text answer streams in: created, in_progress, the message item and its one
// output_text part opened, deltas, then everything closed and the response completed.
function checkTextStream(evs, text) {
  const types = evs.map((e) => e.type);
  const deltas = types.filter((t) => t === 'response.output_text.delta').length;
  assert.ok(deltas >= 2, `the text streams in several deltas (${deltas})`);
  assert.deepEqual(types, [
    'response.created', 'response.in_progress', 'response.output_item.added',
    'response.content_part.added', ...Array(deltas).fill('response.output_text.delta'),
    'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
    'response.completed',
  ]);
  evs.forEach((e, i) => assert.equal(e.sequence_number, i, `sequence_number of ${e.type}`));
  const [created] = evs;
  assert.equal(created.response.status, 'in_progress');
  const added = evs.find((e) => e.type === 'response.output_item.added');
  assert.equal(added.item.type, 'message');
  assert.equal(added.item.role, 'assistant');
  const itemId = added.item.id;
  for (const e of evs.filter((x) => 'item_id' in x)) assert.equal(e.item_id, itemId, e.type);
  const streamed = evs.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
  assert.equal(streamed, text, 'the deltas add up to the text');
  assert.equal(evs.find((e) => e.type === 'response.output_text.done').text, text);
  const done = evs.find((e) => e.type === 'response.output_item.done').item;
  assert.equal(done.id, itemId);
  assert.equal(done.status, 'completed');
  assert.deepEqual(done.content.map((p) => [p.type, p.text]), [['output_text', text]]);
  const completed = evs.at(-1).response;
  assert.equal(completed.id, created.response.id, 'one response id throughout');
  assert.equal(completed.status, 'completed');
  assert.deepEqual(completed.output, [done], 'the completed response holds the item as streamed');
  assert.ok(completed.usage.input_tokens > 0 && completed.usage.output_tokens > 0,
    JSON.stringify(completed.usage));
}

test('responses.create: plain text, instructions rendered as the system turn', async () => {
  const script = { rules: [{ name: 'hello', contains: ['Say hello'], reply: 'Hello there, friend.' }] };
  await withServer(script, async (server) => {
    const r = await create(server, { input: 'Say hello', instructions: 'You are terse.' });
    assert.equal(r.object, 'response');
    assert.equal(r.status, 'completed');
    assert.match(r.id, /^resp_/);
    assert.equal(r.model, MODEL_ID);
    assert.equal(r.output_text, 'Hello there, friend.', 'the SDK joins the output text');
    assert.equal(r.output.length, 1);
    const [msg] = r.output;
    assert.equal(msg.type, 'message');
    assert.equal(msg.role, 'assistant');
    assert.equal(msg.status, 'completed');
    assert.deepEqual(msg.content.map((p) => p.type), ['output_text']);
    assert.ok(r.usage.input_tokens > 0, JSON.stringify(r.usage));
    assert.ok(r.usage.output_tokens > 0);
    assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
    const [req] = server.requests();
    assert.equal(req.rule, 'hello');
    assert.ok(req.prompt.includes('<|im_start|>system\nYou are terse.<|im_end|>'),
      'instructions are the system turn');
    assert.ok(req.prompt.includes('<|im_start|>user\nSay hello<|im_end|>\n<|im_start|>assistant\n'));
  }, { name: 'responses-plain' });
});

test('a developer message in input is the system turn (Codex sends its prompt so)', async () => {
  const script = { rules: [{ name: 'hello', contains: ['Say hello'], reply: 'Bonjour.' }] };
  await withServer(script, async (server) => {
    const r = await create(server, { input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Answer in French.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hello' }] },
    ] });
    assert.equal(r.output_text, 'Bonjour.');
    const [req] = server.requests();
    assert.ok(req.prompt.includes('<|im_start|>system\nAnswer in French.<|im_end|>'),
      'the developer text is the system turn, not dropped by the template');
  }, { name: 'responses-developer' });
});

test('responses.create stream: every event type in order, deltas add up to the text', async () => {
  const text = 'Streaming works, one token at a time.';
  const script = { rules: [{ name: 'stream', contains: ['Stream something'], reply: text }] };
  await withServer(script, async (server) => {
    const evs = await events(await create(server, {
      input: [{ role: 'user', content: 'Stream something' }], stream: true,
    }));
    checkTextStream(evs, text);
    // The SDK's stream helper reassembles the same response.
    const s = client(server).responses.stream({ model: MODEL_ID, input: 'Stream something' });
    const final = await withTimeout(s.finalResponse(), 30000, 'responses.stream finalResponse');
    assert.equal(final.output_text, text);
    assert.equal(final.status, 'completed');
  }, { name: 'responses-stream' });
});

test('function tools: a function_call item, then function_call_output gets the answer', async () => {
  const script = { rules: [
    { name: 'final', contains: ['<tool_response>', 'sunny, 21 C'], reply: 'It is sunny in Paris, 21 C.' },
    { name: 'call', contains: ['weather in Paris'], reply: toolCallText('get_weather', { city: 'Paris' }) },
  ] };
  await withServer(script, async (server) => {
    const input = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const first = await create(server, { input, tools: [WEATHER] });
    assert.equal(first.status, 'completed');
    const calls = first.output.filter((i) => i.type === 'function_call');
    assert.equal(calls.length, 1, JSON.stringify(first.output));
    const [call] = calls;
    assert.equal(call.name, 'get_weather');
    assert.equal(typeof call.arguments, 'string', 'arguments is a JSON string');
    assert.deepEqual(JSON.parse(call.arguments), { city: 'Paris' });
    assert.ok(call.call_id, 'the call has a call_id');
    assert.ok(call.id, 'the item has an id');
    assert.equal(first.output_text, '', 'no text besides the call');

    // The next turn: the history, the model's output items as returned, and the tool's output.
    const second = await create(server, {
      input: [...input, ...first.output,
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny, 21 C' }],
      tools: [WEATHER],
    });
    assert.equal(second.output_text, 'It is sunny in Paris, 21 C.');
    assert.deepEqual(second.output.map((i) => i.type), ['message']);

    const reqs = server.requests();
    assert.deepEqual(reqs.map((q) => q.rule), ['call', 'final']);
    assert.ok(reqs[0].prompt.includes('"name": "get_weather"'), 'the tool is offered in the prompt');
    const p = reqs[1].prompt;
    const rendered = `<|im_start|>assistant\n${toolCallText('get_weather', { city: 'Paris' })}<|im_end|>`;
    assert.ok(p.includes(rendered), `the call is in the history as the template writes it:\n${rendered}`);
    assert.ok(p.includes('<tool_response>\nsunny, 21 C\n</tool_response>'), 'the output is the tool turn');
    assert.ok(p.indexOf(rendered) < p.indexOf('<tool_response>'), 'call before its output');
  }, { name: 'responses-tools' });
});

test('streamed function call: output_item.added, argument deltas, done, completed', async () => {
  const args = { city: 'Reykjavik' };
  const script = { rules: [{ name: 'call', contains: ['Reykjavik'], reply: toolCallText('get_weather', args) }] };
  await withServer(script, async (server) => {
    const evs = await events(await create(server, {
      input: 'Weather in Reykjavik?', tools: [WEATHER], stream: true,
    }));
    const types = evs.map((e) => e.type);
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    assert.ok(!types.includes('response.output_text.delta'), `no text: ${types}`);
    evs.forEach((e, i) => assert.equal(e.sequence_number, i, `sequence_number of ${e.type}`));
    const added = evs.find((e) => e.type === 'response.output_item.added');
    assert.equal(added.item.type, 'function_call');
    assert.equal(added.item.name, 'get_weather');
    const deltas = evs.filter((e) => e.type === 'response.function_call_arguments.delta');
    assert.ok(deltas.length >= 1, `argument deltas: ${types}`);
    for (const d of deltas) assert.equal(d.item_id, added.item.id);
    const joined = deltas.map((d) => d.delta).join('');
    const argsDone = evs.find((e) => e.type === 'response.function_call_arguments.done');
    assert.equal(argsDone.arguments, joined, 'the deltas add up to the arguments');
    assert.deepEqual(JSON.parse(joined), args);
    const done = evs.find((e) => e.type === 'response.output_item.done');
    assert.ok(types.indexOf('response.function_call_arguments.done') < types.indexOf('response.output_item.done'));
    assert.equal(done.item.type, 'function_call');
    assert.equal(done.item.call_id, added.item.call_id);
    assert.deepEqual(JSON.parse(done.item.arguments), args);
    const completed = evs.at(-1).response;
    assert.equal(completed.status, 'completed');
    assert.deepEqual(completed.output.map((i) => [i.type, i.name, i.call_id]),
      [['function_call', 'get_weather', done.item.call_id]]);
  }, { name: 'responses-tools-stream' });
});

test('text.format json_schema: the answer is the JSON, the format is echoed', async () => {
  const answer = { city: 'Paris', population: 2100000 };
  const script = { rules: [{ name: 'json', contains: ['Describe Paris'], reply: JSON.stringify(answer) }] };
  const format = {
    type: 'json_schema',
    name: 'city',
    schema: {
      type: 'object',
      properties: { city: { type: 'string' }, population: { type: 'integer' } },
      required: ['city', 'population'],
      additionalProperties: false,
    },
    strict: true,
  };
  await withServer(script, async (server) => {
    const r = await create(server, { input: 'Describe Paris as JSON', text: { format } });
    assert.deepEqual(JSON.parse(r.output_text), answer);
    assert.equal(r.text?.format?.type, 'json_schema', JSON.stringify(r.text));
    assert.equal(r.text.format.name, 'city');
    // A schema that is not an object is refused before anything is generated.
    await assert.rejects(
      create(server, { input: 'Describe Paris as JSON', text: { format: { ...format, schema: 'nope' } } }),
      (e) => e instanceof OpenAI.BadRequestError && e.status === 400);
    assert.equal(server.requests().length, 1, 'the refused request never reached the model');
  }, { name: 'responses-json-schema' });
});
