// Real clients' structured-output helpers get typed objects from baton serve:
//  - openai: chat.completions.parse / .stream with zodResponseFormat (json_schema);
//  - Vercel AI SDK: generateObject / streamObject over @ai-sdk/openai-compatible with
//    supportsStructuredOutputs (json_schema);
//  - LangChain JS: ChatOpenAI.withStructuredOutput(zod) by default (json_schema) and with
//    method "jsonMode" (json_object).
// Each client's requests are recorded (a fetch wrapper) to check which constraint it sent.
// Runs on the random-weight model and, when present, on stories260K.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, streamObject } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { BatonServer, MODEL_ID, STORIES_MODEL, models, withTimeout } from './helpers.mjs';

const API_KEY = 'sk-unused';
const SEEDS = [1, 2, 3];

// Small, bounded schemas, so that even a random-weight model finishes in a few dozen tokens.
const Person = z.object({
  name: z.string().min(1).max(16),
  age: z.number().int().min(0).max(120),
  role: z.enum(['admin', 'user', 'guest']),
  tags: z.array(z.string().max(6)).max(2),
  manager: z.string().max(10).nullable(),
});

const Order = z.object({
  id: z.string().max(8),
  items: z.array(z.object({
    sku: z.string().regex(/^[A-Z]{2}[0-9]{2}$/),
    qty: z.number().int().min(1).max(9),
  })).min(1).max(2),
  express: z.boolean(),
  total: z.number().min(0).max(1000),
});

function recorder() {
  const bodies = [];
  const fetchImpl = async (input, init) => {
    if (typeof init?.body === 'string') {
      try { bodies.push(JSON.parse(init.body)); } catch { bodies.push(init.body); }
    }
    return fetch(input, init);
  };
  return { bodies, fetch: fetchImpl };
}

function sentFormats(bodies) {
  return bodies.map((b) => b?.response_format?.type);
}

if (!STORIES_MODEL) {
  test('clients on stories260K', { skip: 'stories260K.gguf not found in ../shared/models' }, () => {});
}

for (const model of models()) {
  describe(`clients on ${model.name}`, () => {
    let server;
    before(async () => { server = await BatonServer.start(model.path); });
    after(async () => {
      const { code, signal } = await server.stop();
      assert.equal(code, 0, `baton serve exited with ${code ?? signal} after SIGTERM\n${server.stderrTail()}`);
    });

    const openai = (rec) => new OpenAI({
      baseURL: server.baseURL, apiKey: API_KEY, maxRetries: 0, timeout: 120000, fetch: rec.fetch,
    });

    test('openai chat.completions.parse with zodResponseFormat', async () => {
      const rec = recorder();
      const client = openai(rec);
      for (const seed of SEEDS) {
        const c = await client.chat.completions.parse({
          model: MODEL_ID,
          messages: [{ role: 'user', content: 'Describe a person.' }],
          response_format: zodResponseFormat(Person, 'person'),
          temperature: 1,
          seed,
          max_tokens: 1024,
        });
        const msg = c.choices[0].message;
        assert.equal(c.choices[0].finish_reason, 'stop', msg.content);
        assert.ok(msg.parsed, `no parsed object: ${msg.content}`);
        assert.deepEqual(Person.parse(msg.parsed), msg.parsed, msg.content);
        assert.equal(typeof msg.parsed.age, 'number');
      }
      assert.deepEqual(sentFormats(rec.bodies), SEEDS.map(() => 'json_schema'));
      assert.equal(rec.bodies[0].response_format.json_schema.name, 'person');
      assert.equal(rec.bodies[0].response_format.json_schema.strict, true);
    });

    test('openai chat.completions.stream with zodResponseFormat', async () => {
      const rec = recorder();
      const client = openai(rec);
      const stream = client.chat.completions.stream({
        model: MODEL_ID,
        messages: [{ role: 'user', content: 'An order, please.' }],
        response_format: zodResponseFormat(Order, 'order'),
        temperature: 1,
        seed: 7,
        max_tokens: 1024,
      });
      let deltas = 0;
      stream.on('content.delta', () => { deltas++; });
      const c = await withTimeout(stream.finalChatCompletion(), 120000, 'stream');
      const msg = c.choices[0].message;
      assert.equal(c.choices[0].finish_reason, 'stop', msg.content);
      assert.ok(deltas > 1, `content came in ${deltas} delta(s)`);
      assert.deepEqual(Order.parse(msg.parsed), msg.parsed, msg.content);
      assert.deepEqual(sentFormats(rec.bodies), ['json_schema']);
    });

    const aiModel = (rec) => createOpenAICompatible({
      name: 'baton', baseURL: server.baseURL, apiKey: API_KEY, supportsStructuredOutputs: true,
      fetch: rec.fetch,
    }).chatModel(MODEL_ID);

    test('Vercel AI SDK generateObject (json_schema)', async () => {
      const rec = recorder();
      for (const seed of SEEDS) {
        const r = await withTimeout(generateObject({
          model: aiModel(rec), schema: Person, schemaName: 'person',
          prompt: 'Describe a person.', temperature: 1, seed, maxOutputTokens: 1024, maxRetries: 0,
        }), 120000, 'generateObject');
        assert.equal(r.finishReason, 'stop');
        assert.deepEqual(Person.parse(r.object), r.object);
      }
      assert.deepEqual(sentFormats(rec.bodies), SEEDS.map(() => 'json_schema'));
      assert.equal(rec.bodies[0].response_format.json_schema.name, 'person');
    });

    test('Vercel AI SDK streamObject (json_schema)', async () => {
      const rec = recorder();
      const r = streamObject({
        model: aiModel(rec), schema: Order, schemaName: 'order',
        prompt: 'An order, please.', temperature: 1, seed: 5, maxOutputTokens: 1024, maxRetries: 0,
        onError: () => {},
      });
      let partials = 0;
      await withTimeout((async () => { for await (const _ of r.partialObjectStream) partials++; })(),
        120000, 'streamObject');
      const object = await r.object;
      assert.deepEqual(Order.parse(object), object);
      assert.equal(await r.finishReason, 'stop');
      assert.ok(partials >= 1);
      assert.deepEqual(sentFormats(rec.bodies), ['json_schema']);
      assert.equal(rec.bodies[0].stream, true);
    });

    const chat = (rec, seed, maxTokens = 1024) => new ChatOpenAI({
      model: MODEL_ID, apiKey: API_KEY, maxRetries: 0, timeout: 120000, temperature: 1,
      maxTokens, modelKwargs: { seed }, configuration: { baseURL: server.baseURL, fetch: rec.fetch },
    });

    test('LangChain withStructuredOutput (default method: json_schema)', async () => {
      const rec = recorder();
      for (const seed of SEEDS) {
        const structured = chat(rec, seed).withStructuredOutput(Order, { name: 'order' });
        const o = await withTimeout(structured.invoke('An order, please.'), 120000, 'invoke');
        assert.deepEqual(Order.parse(o), o);
      }
      assert.deepEqual(sentFormats(rec.bodies), SEEDS.map(() => 'json_schema'));
      assert.equal(rec.bodies[0].response_format.json_schema.name, 'order');
      assert.equal(rec.bodies[0].tools, undefined, 'no tool call: the schema went as response_format');
    });

    test('LangChain withStructuredOutput includeRaw: the raw message and the parsed object', async () => {
      const rec = recorder();
      const structured = chat(rec, 11).withStructuredOutput(Person, { name: 'person', includeRaw: true });
      const { raw, parsed } = await withTimeout(structured.invoke('Describe a person.'), 120000, 'invoke');
      assert.ok(parsed, `not parsed: ${raw.content}`);
      assert.deepEqual(Person.parse(parsed), parsed);
      assert.deepEqual(JSON.parse(raw.content), parsed);
      assert.equal(raw.response_metadata?.finish_reason, 'stop');
    });

    // json_object bounds nothing inside the object, and a random-weight model with a 32,000-token
    // vocabulary picks a closing quote about once in a few hundred tokens: the answer is closed
    // in time because it is planned within max_tokens.
    test('LangChain withStructuredOutput method jsonMode (json_object)', async () => {
      const rec = recorder();
      // json_object promises an object, not these keys: the schema accepts any object.
      const AnyObject = z.looseObject({});
      for (const seed of SEEDS) {
        const structured = chat(rec, seed, 96).withStructuredOutput(AnyObject, { method: 'jsonMode' });
        const o = await withTimeout(structured.invoke('Reply in JSON: an object describing a cat.'),
          120000, 'invoke');
        assert.ok(o && typeof o === 'object' && !Array.isArray(o), JSON.stringify(o));
      }
      assert.deepEqual(sentFormats(rec.bodies), SEEDS.map(() => 'json_object'));
    });
  });
}
