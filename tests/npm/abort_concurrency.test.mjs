// A client that aborts mid-stream frees its slot; 20 clients at once all get their answers.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { cancelledCount, client, getJson, waitIdle } from './helpers.mjs';

test('AbortController mid-stream cancels the request and frees the slot', async () => {
  await waitIdle();
  const before = await cancelledCount();
  const controller = new AbortController();
  const stream = await client().completions.create(
    { prompt: 'Once upon a time', max_tokens: 1500, temperature: 0, ignore_eos: true, stream: true },
    { signal: controller.signal },
  );
  let chunks = 0;
  let finished = false;
  // The client ends the iteration quietly on abort (or throws AbortError, depending on version).
  try {
    for await (const chunk of stream) {
      if (chunk.choices[0]?.finish_reason) finished = true;
      if (++chunks === 2) controller.abort();
    }
  } catch (e) {
    if (e.name !== 'AbortError' && !/abort/i.test(e.message)) throw e;
  }
  assert.ok(chunks >= 2);
  assert.equal(finished, false, 'the stream ended before the abort');
  const s = await waitIdle();
  assert.equal(s.running.length, 0);
  assert.equal(await cancelledCount(), before + 1);
});

test('20 concurrent clients get the same greedy answer', async () => {
  const ask = () => client().chat.completions.create({
    messages: [{ role: 'user', content: 'Say something nice.' }], max_tokens: 16, temperature: 0,
  });
  const answers = await Promise.all(Array.from({ length: 20 }, ask));
  const first = answers[0].choices[0].message.content;
  for (const a of answers) {
    assert.equal(a.choices[0].message.content, first);
    assert.equal(a.usage.completion_tokens, answers[0].usage.completion_tokens);
  }
  const s = await waitIdle();
  assert.ok(s.totals.requests.ok >= 20);
  const metrics = await fetch(`${process.env.BATON_URL}/metrics`).then((r) => r.text());
  assert.match(metrics, /# TYPE baton_requests_total counter/);
  assert.match(metrics, /baton_time_to_first_token_seconds_count \d+/);
  assert.ok((await getJson('/health')).status === 'ok');
});
