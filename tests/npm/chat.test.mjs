// Chat completions through the official OpenAI client, streamed and not.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { client, exact, plainChatPrompt, runText, waitIdle } from './helpers.mjs';

const messages = [{ role: 'user', content: 'Tell me a story about a cat.' }];

test('chat completion, not streamed, equals baton run', async (t) => {
  const r = await client().chat.completions.create({
    messages, max_tokens: 24, temperature: 0,
  });
  assert.equal(r.object, 'chat.completion');
  assert.match(r.id, /^chatcmpl-/);
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.ok(r.usage.prompt_tokens > 0);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  assert.ok(r.usage.completion_tokens <= 24);
  if (!exact) return t.skip('no ../shared model: exact text not compared');
  assert.equal(r.choices[0].message.content, runText(plainChatPrompt(messages), 24));
});

test('chat completion, streamed, equals the unstreamed answer', async () => {
  const plain = await client().chat.completions.create({ messages, max_tokens: 24, temperature: 0 });
  const stream = await client().chat.completions.create({
    messages, max_tokens: 24, temperature: 0, stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let role = null;
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    if (chunk.choices.length === 0) continue;
    const c = chunk.choices[0];
    if (c.delta.role) role = c.delta.role;
    if (c.delta.content) text += c.delta.content;
    if (c.finish_reason) finish = c.finish_reason;
  }
  assert.equal(role, 'assistant');
  assert.equal(text, plain.choices[0].message.content);
  assert.equal(finish, plain.choices[0].finish_reason);
  assert.ok(usage, 'include_usage sends a usage chunk');
  assert.equal(usage.completion_tokens, plain.usage.completion_tokens);
  await waitIdle();
});

test('errors come back as OpenAI API errors', async () => {
  await assert.rejects(
    client().chat.completions.create({ messages, temperature: 5 }),
    (e) => e.status === 400 && /temperature/.test(e.message),
  );
  await assert.rejects(
    client().chat.completions.create({ messages, model: 'not-this-one' }),
    (e) => e.status === 400 && e.param === 'model',
  );
  const models = await client().models.list();
  assert.equal(models.data.length, 1);
});
