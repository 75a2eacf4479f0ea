// The `@anthropic-ai/sdk` npm SDK (Anthropic's Messages API) against the scripted server:
// messages.create plain and with tools, the tool_result round trip, client.messages.stream and
// its finalMessage (every event type, in order), countTokens, and a 400 as BadRequestError.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';

import { API_KEY, MODEL_ID, toolCallText, withServer, withTimeout } from './helpers.mjs';

const WEATHER = {
  name: 'get_weather',
  description: 'Current weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

// The tool_use id pattern the Messages API accepts back in tool_result.tool_use_id.
const TOOL_ID = /^[A-Za-z0-9_-]+$/;

function client(server) {
  // The SDK's base URL is the server root: it adds /v1/messages itself.
  return new Anthropic({ apiKey: API_KEY, baseURL: server.url, timeout: 30000, maxRetries: 0 });
}

function create(server, body) {
  return withTimeout(client(server).messages.create({ model: MODEL_ID, max_tokens: 256, ...body }),
    30000, 'messages.create');
}

// Reads a MessageStream: its events (pings left out) and the final message.
async function streamed(server, body) {
  const stream = client(server).messages.stream({ model: MODEL_ID, max_tokens: 256, ...body });
  const evs = [];
  let text = '';
  stream.on('text', (t) => { text += t; });
  return withTimeout((async () => {
    // Copies: the SDK builds its message snapshot in the message_start event's object.
    for await (const ev of stream) if (ev.type !== 'ping') evs.push(structuredClone(ev));
    return { evs, text, final: await stream.finalMessage() };
  })(), 30000, 'messages.stream');
}

// message_start, then each block opened, its deltas, closed, then message_delta and message_stop.
function checkOrder(evs) {
  const types = evs.map((e) => e.type);
  assert.equal(types[0], 'message_start', types.join(' '));
  assert.deepEqual(types.slice(-2), ['message_delta', 'message_stop'], types.join(' '));
  let open = null;
  let next = 0;
  for (const e of evs.slice(1, -2)) {
    if (e.type === 'content_block_start') {
      assert.equal(open, null, 'blocks do not overlap');
      assert.equal(e.index, next, 'block indices count from 0');
      open = e.index;
    } else if (e.type === 'content_block_delta') {
      assert.equal(e.index, open, 'a delta belongs to the open block');
    } else if (e.type === 'content_block_stop') {
      assert.equal(e.index, open);
      open = null;
      next++;
    } else {
      assert.fail(`unexpected event ${e.type} between message_start and message_delta`);
    }
  }
  assert.equal(open, null, 'every block is closed');
  return next;
}

test('messages.create: text, end_turn, usage; system rendered as the system turn', async () => {
  const script = { rules: [{ name: 'hello', contains: ['Say hello'], reply: 'Hello there, friend.' }] };
  await withServer(script, async (server) => {
    const r = await create(server, {
      system: 'You are terse.', messages: [{ role: 'user', content: 'Say hello' }],
    });
    assert.equal(r.type, 'message');
    assert.equal(r.role, 'assistant');
    assert.match(r.id, /^msg_/);
    assert.equal(r.model, MODEL_ID);
    assert.deepEqual(r.content.map((b) => [b.type, b.text]), [['text', 'Hello there, friend.']]);
    assert.equal(r.stop_reason, 'end_turn');
    assert.equal(r.stop_sequence ?? null, null);
    assert.ok(r.usage.input_tokens > 0 && r.usage.output_tokens > 0, JSON.stringify(r.usage));
    const [req] = server.requests();
    assert.equal(req.rule, 'hello');
    assert.ok(req.prompt.includes('<|im_start|>system\nYou are terse.<|im_end|>'), 'system turn');
    assert.ok(req.prompt.includes('<|im_start|>user\nSay hello<|im_end|>\n<|im_start|>assistant\n'));
    assert.equal(req.max_tokens, 256, 'max_tokens reaches the backend');
  }, { name: 'anthropic-plain' });
});

test('messages.stream: event order, text deltas, finalMessage', async () => {
  const text = 'Streaming works, one token at a time.';
  const script = { rules: [{ name: 'stream', contains: ['Stream something'], reply: text }] };
  await withServer(script, async (server) => {
    const { evs, text: joined, final } = await streamed(server, {
      messages: [{ role: 'user', content: 'Stream something' }],
    });
    assert.equal(checkOrder(evs), 1, 'one content block');
    const start = evs[0].message;
    assert.equal(start.role, 'assistant');
    assert.deepEqual(start.content, []);
    assert.ok(start.usage.input_tokens > 0, JSON.stringify(start.usage));
    assert.equal(evs[1].content_block.type, 'text');
    const deltas = evs.filter((e) => e.type === 'content_block_delta');
    assert.ok(deltas.length >= 2, `several deltas (${deltas.length})`);
    assert.ok(deltas.every((d) => d.delta.type === 'text_delta'));
    assert.equal(joined, text, 'the text deltas add up to the text');
    const md = evs.at(-2);
    assert.equal(md.delta.stop_reason, 'end_turn');
    assert.ok(md.usage.output_tokens > 0, JSON.stringify(md.usage));
    assert.equal(final.id, start.id);
    assert.equal(final.stop_reason, 'end_turn');
    assert.deepEqual(final.content.map((b) => [b.type, b.text]), [['text', text]]);
  }, { name: 'anthropic-stream' });
});

test('tools: a tool_use block, then the tool_result turn gets the answer', async () => {
  const script = { rules: [
    { name: 'final', contains: ['<tool_response>', 'sunny, 21 C'], reply: 'It is sunny in Paris, 21 C.' },
    { name: 'call', contains: ['weather in Paris'], reply: toolCallText('get_weather', { city: 'Paris' }) },
  ] };
  await withServer(script, async (server) => {
    const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const first = await create(server, { messages, tools: [WEATHER] });
    assert.equal(first.stop_reason, 'tool_use');
    const uses = first.content.filter((b) => b.type === 'tool_use');
    assert.equal(uses.length, 1, JSON.stringify(first.content));
    const [use] = uses;
    assert.match(use.id, TOOL_ID, 'an id tool_result can name');
    assert.equal(use.name, 'get_weather');
    assert.deepEqual(use.input, { city: 'Paris' }, 'input is an object, not a string');
    assert.ok(!first.content.some((b) => b.type === 'text' && b.text.includes('<tool_call')),
      'no markup in the text');

    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [
      { type: 'tool_result', tool_use_id: use.id, content: 'sunny, 21 C' },
    ] });
    const second = await create(server, { messages, tools: [WEATHER] });
    assert.equal(second.stop_reason, 'end_turn');
    assert.deepEqual(second.content.map((b) => [b.type, b.text]), [['text', 'It is sunny in Paris, 21 C.']]);

    const reqs = server.requests();
    assert.deepEqual(reqs.map((q) => q.rule), ['call', 'final']);
    assert.ok(reqs[0].prompt.includes('"name": "get_weather"'), 'the tool is offered in the prompt');
    const p = reqs[1].prompt;
    const rendered = `<|im_start|>assistant\n${toolCallText('get_weather', { city: 'Paris' })}<|im_end|>`;
    assert.ok(p.includes(rendered), `the call is in the history as the template writes it:\n${rendered}`);
    assert.ok(p.includes('<tool_response>\nsunny, 21 C\n</tool_response>'), 'the result is the tool turn');
    assert.ok(p.indexOf(rendered) < p.indexOf('<tool_response>'), 'call before its result');
  }, { name: 'anthropic-tools' });
});

test('streamed tool_use after text: input_json_delta adds up to the input', async () => {
  const args = { city: 'Reykjavik' };
  const reply = `Let me check.\n${toolCallText('get_weather', args)}`;
  const script = { rules: [{ name: 'call', contains: ['Reykjavik'], reply }] };
  await withServer(script, async (server) => {
    const { evs, final } = await streamed(server, {
      messages: [{ role: 'user', content: 'Weather in Reykjavik?' }], tools: [WEATHER],
    });
    assert.equal(checkOrder(evs), 2, 'a text block, then a tool_use block');
    const starts = evs.filter((e) => e.type === 'content_block_start');
    assert.equal(starts[0].content_block.type, 'text');
    const tu = starts[1].content_block;
    assert.equal(tu.type, 'tool_use');
    assert.equal(tu.name, 'get_weather');
    assert.match(tu.id, TOOL_ID);
    assert.deepEqual(tu.input, {}, 'the input arrives in deltas');
    const json = evs.filter((e) => e.type === 'content_block_delta' && e.index === 1);
    assert.ok(json.length >= 1 && json.every((d) => d.delta.type === 'input_json_delta'));
    assert.deepEqual(JSON.parse(json.map((d) => d.delta.partial_json).join('')), args);
    assert.equal(evs.at(-2).delta.stop_reason, 'tool_use');
    assert.equal(final.stop_reason, 'tool_use');
    assert.deepEqual(final.content.map((b) => b.type), ['text', 'tool_use']);
    assert.equal(final.content[0].text.trim(), 'Let me check.');
    assert.ok(!final.content[0].text.includes('<tool_call'), 'no markup in the text');
    assert.deepEqual(final.content[1].input, args);
    assert.equal(final.content[1].id, tu.id);
  }, { name: 'anthropic-tools-stream' });
});

test('countTokens: the prompt tokens messages.create would use, without generating', async () => {
  const script = { rules: [{ name: 'any', reply: 'ok' }] };
  await withServer(script, async (server) => {
    const body = {
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [WEATHER],
    };
    const counted = await withTimeout(client(server).messages.countTokens({ model: MODEL_ID, ...body }),
      30000, 'countTokens');
    assert.ok(Number.isInteger(counted.input_tokens) && counted.input_tokens > 0, JSON.stringify(counted));
    assert.equal(server.requests().length, 0, 'counting generates nothing');
    const plain = await withTimeout(client(server).messages.countTokens({
      model: MODEL_ID, messages: body.messages,
    }), 30000, 'countTokens');
    assert.ok(plain.input_tokens < counted.input_tokens, 'the system prompt and tools count');
    const r = await create(server, body);
    assert.equal(counted.input_tokens, r.usage.input_tokens, 'the same count as the real request');
    assert.equal(server.requests()[0].prompt_tokens, counted.input_tokens);
  }, { name: 'anthropic-count-tokens' });
});

test('a request without max_tokens is a 400: BadRequestError with the message', async () => {
  await withServer({ rules: [{ name: 'any', reply: 'ok' }] }, async (server) => {
    const c = client(server);
    const err = await withTimeout(c.messages.create({
      model: MODEL_ID, messages: [{ role: 'user', content: 'hi' }],
    }).then(() => null, (e) => e), 30000, 'messages.create');
    assert.ok(err instanceof Anthropic.BadRequestError, `BadRequestError, got ${err}`);
    assert.equal(err.status, 400);
    assert.match(err.message, /max_tokens/);
    assert.equal(err.error?.type, 'error', JSON.stringify(err.error));
    assert.equal(err.error.error?.type, 'invalid_request_error');
    assert.match(err.error.error.message, /max_tokens/);
    assert.equal(server.requests().length, 0, 'nothing reached the model');
  }, { name: 'anthropic-error' });
});
