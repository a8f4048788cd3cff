// Protects: src/http/sequence.ts, middlewares run as one router layer: in order, and an error however raised (passed to
// next, thrown, or a rejected promise) skips the remaining steps and reaches the error handlers, as a router does.
import express, { type RequestHandler } from 'express';
import type { AddressInfo } from 'node:net';
import { inSequence } from '../../src/http/sequence';

async function run(steps: RequestHandler[]): Promise<{ status: number; body: string }> {
  const app = express();
  app.use(inSequence(steps));
  app.use((_req, res) => void res.status(200).send('end'));
  app.use(((error, _req, res, _next) => void res.status(500).send(`error: ${(error as Error).message}`)) as express.ErrorRequestHandler);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return { status: res.status, body: await res.text() };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

it('runs the steps in order, then goes on', async () => {
  const seen: number[] = [];
  const mark = (n: number): RequestHandler => (_req, _res, next) => { seen.push(n); next(); };
  expect(await run([mark(1), mark(2), async (_req, _res, next) => { await Promise.resolve(); seen.push(3); next(); }])).toEqual({ status: 200, body: 'end' });
  expect(seen).toEqual([1, 2, 3]);
});

it.each([
  ['passed to next', ((_req, _res, next) => next(new Error('boom'))) as RequestHandler],
  ['thrown', (() => { throw new Error('boom'); }) as RequestHandler],
  ['a rejected promise', (async () => { throw new Error('boom'); }) as RequestHandler],
])('sends an error %s to the error handlers and skips the remaining steps', async (_how, failing) => {
  let after = false;
  expect(await run([failing, (_req, _res, next) => { after = true; next(); }])).toEqual({ status: 500, body: 'error: boom' });
  expect(after).toBe(false);
});
