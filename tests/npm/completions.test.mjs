// Text completions through the official OpenAI client, and prefix-cache usage.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { client, exact, runText } from './helpers.mjs';

const prompt = 'Once upon a time, there was a little dog';

test('completion, not streamed, equals baton run', async (t) => {
  const r = await client().completions.create({ model: undefined, prompt, max_tokens: 32, temperature: 0 });
  assert.equal(r.object, 'text_completion');
  assert.match(r.id, /^cmpl-/);
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.ok(r.usage.prompt_tokens > 0);
  if (!exact) return t.skip('no ../shared model: exact text not compared');
  assert.equal(r.choices[0].text, runText(prompt, 32));
});

test('completion, streamed, equals the unstreamed answer', async () => {
  const plain = await client().completions.create({ prompt, max_tokens: 32, temperature: 0 });
  const stream = await client().completions.create({ prompt, max_tokens: 32, temperature: 0, stream: true });
  let text = '';
  let finish = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'text_completion');
    text += chunk.choices[0].text;
    if (chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
  }
  assert.equal(text, plain.choices[0].text);
  assert.equal(finish, plain.choices[0].finish_reason);
});

test('a repeated prompt reports cached tokens', async () => {
  const long = 'The sun was warm and the sky was blue. A small bird sat on a branch and sang a '
    + 'happy song for all the children who played in the green park near the old house.';
  const first = await client().completions.create({ prompt: long, max_tokens: 4, temperature: 0 });
  const second = await client().completions.create({ prompt: long, max_tokens: 4, temperature: 0 });
  assert.equal(second.usage.prompt_tokens, first.usage.prompt_tokens);
  assert.ok(first.usage.prompt_tokens >= 32, `prompt is ${first.usage.prompt_tokens} tokens`);
  const cached = second.usage.prompt_tokens_details.cached_tokens;
  assert.ok(cached > 0, `cached_tokens = ${cached}`);
  assert.ok(cached < second.usage.prompt_tokens);
  assert.equal(second.choices[0].text, first.choices[0].text);
});
