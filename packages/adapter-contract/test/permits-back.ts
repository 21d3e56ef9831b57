import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { ConcurrencyLimiter, ConcurrencyLimiterOptions } from '@sluice/core';
import type { ConcurrencyLimits } from './concurrency-drivers';
import { send, until, type Handlers } from './concurrency-harness';
import type { TestApp } from './drivers';

/** What the permit cases need of the concurrency contract around them, on one store. */
export interface PermitCaseHelpers {
  /** Serves an app behind `limits` (closed after the test), its route running the test's handlers. */
  serve(limits: ConcurrencyLimits): Promise<TestApp>;
  /** Resolves once the handler of `path` has begun. */
  started(path: string): Promise<void>;
  /** The running test's handlers (new ones before each). */
  handlers(): Handlers;
  /** A limiter on the store under test, in a namespace of its own. */
  limiterOf(options: Omit<ConcurrencyLimiterOptions, 'store' | 'prefix'>): ConcurrencyLimiter;
  /** Resolves once nothing is held or waiting, here or in the store. */
  noPermitLeft(limiter: ConcurrencyLimiter, keys: readonly string[]): Promise<void>;
}

/**
 * The concurrency contract's cases of a request that ends other than by its handler's answer (the
 * handler throws or never answers, the client leaves before its permit or while pipelining, or
 * never reads): its permit goes back, once. Registered in the calling `describe`.
 */
export function testPermitsBack({
  serve,
  started,
  handlers: currentHandlers,
  limiterOf,
  noPermitLeft,
}: PermitCaseHelpers): void {
  let handlers: Handlers;
  beforeEach(() => {
    handlers = currentHandlers();
  });

  test('a handler that throws gives its permit back', async () => {
    const limiter = limiterOf({ max: 1 });
    const app = await serve({ concurrency: { limiter, key: 'all' } });
    expect((await send(app, '/throw').reply)?.status).toBe(500);
    await noPermitLeft(limiter, ['all']);
    expect((await send(app, '/').reply)?.status).toBe(200);
    expect(app.handled).toBe(1);
  });

  test('a handler that never answers gives its permit back when its client leaves', async () => {
    const limiter = limiterOf({ max: 1 });
    const app = await serve({ concurrency: { limiter, key: 'all' } });
    const hanging = send(app, '/wait/forever');
    await started('/wait/forever');
    expect(limiter.stats().inFlight).toBe(1);
    hanging.leave();
    await noPermitLeft(limiter, ['all']);
    expect((await send(app, '/').reply)?.status).toBe(200);
  });

  // A client that resets before its permit is granted (an async key, a Redis round trip) must
  // not have its handler run with no permit held: 30 such clients ran 30 handlers at once
  // past max 2 (found by an audit), the very backend calls the limit is there to bound.
  test('a client that leaves before its permit is granted runs no handler, and its permit goes back', async () => {
    const limiter = limiterOf({ max: 1 });
    let grant = (): void => undefined;
    const granted = new Promise<void>((resolve) => (grant = resolve));
    // Counts the decisions made, so that the checks below wait for the one of the client
    // that left: before it, no permit is held only because none was asked for yet.
    let decided = 0;
    const acquire = limiter.acquire.bind(limiter);
    limiter.acquire = (...args) =>
      acquire(...args).then((decision) => {
        decided++;
        return decision;
      });
    const app = await serve({ concurrency: { limiter, key: () => granted.then(() => 'all') } });
    let seen: { destroyed: boolean } | undefined;
    app.server.once('connection', (socket) => (seen = socket));
    const leaving = send(app, '/wait/never');
    await until(() => seen !== undefined, 'the server has the connection');
    leaving.leave();
    await until(() => seen?.destroyed === true, 'the server sees the client leave');
    grant();
    await until(() => decided === 1, 'the permit of the client that left is decided');
    await noPermitLeft(limiter, ['all']);
    // A handler run on the permit would start within a few turns of the loop.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(handlers.started).not.toContain('/wait/never');
    expect((await send(app, '/').reply)?.status).toBe(200);
  });

  test('pipelined requests whose connection closes give every permit back, queued responses included', async () => {
    const limiter = limiterOf({ max: 1 });
    const app = await serve({ concurrency: { limiter, key: '$http_user_id' } });
    const socket = connect(Number(new URL(app.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    // Node runs both handlers; the second response waits in its queue, without a socket.
    socket.write(
      'GET /wait/p1 HTTP/1.1\r\nHost: t\r\nuser-id: u1\r\n\r\nGET /wait/p2 HTTP/1.1\r\nHost: t\r\nuser-id: u2\r\n\r\n',
    );
    await started('/wait/p2');
    expect(limiter.stats().inFlight).toBe(2);
    socket.destroy();
    await noPermitLeft(limiter, ['u1', 'u2']);
  });

  // A permit guards the handler's work: once the handler has ended its response, the permit
  // is done, whether the client reads it or not. Given back only when the response was sent,
  // one connection pipelining requests for large pages and never reading held most of a
  // `max: 200` for as long as it stayed connected, the backend idle.
  test.each([256 * 1024, 1024 * 1024])(
    'a client that never reads: pipelined %d-byte responses give their permits back once their handlers end them, once',
    async (bytes) => {
      // Far more than the sockets' buffers take: most responses stay unsent in Node's queue.
      const count = (24 * 1024 * 1024) / bytes;
      const limiter = limiterOf({ max: count });
      const app = await serve({ concurrency: { limiter, key: 'all' } });
      const responses: ServerResponse[] = [];
      app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
        if (req.url?.startsWith('/big/') === true) responses.push(res);
      });
      const socket = connect(Number(new URL(app.url).port), '127.0.0.1');
      socket.on('error', () => undefined);
      await once(socket, 'connect');
      socket.pause(); // never reads
      socket.write(`GET /big/${bytes} HTTP/1.1\r\nHost: t\r\n\r\n`.repeat(count));
      await until(() => handlers.started.length === count, 'every handler runs');
      await until(
        () => responses.length === count && responses.every((res) => res.writableEnded),
        'every handler has ended its response',
      );
      await noPermitLeft(limiter, ['all']);
      expect(responses.filter((res) => !res.writableFinished).length).toBeGreaterThan(1);
      expect((await send(app, '/').reply)?.status).toBe(200);
      // Given back once: the client leaving frees nothing more (one request holds a permit).
      const running = send(app, '/wait/after');
      await started('/wait/after');
      socket.destroy();
      await until(
        () => responses.every((res) => res.req.socket.destroyed),
        'the server sees the client leave',
      );
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(limiter.stats().inFlight).toBe(1);
      expect(await limiter.inFlight('all')).toBe(1);
      handlers.open('/wait/after');
      expect((await running.reply)?.status).toBe(200);
      await noPermitLeft(limiter, ['all']);
    },
  );
}
