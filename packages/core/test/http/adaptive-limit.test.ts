import { EventEmitter } from 'node:events';
import {
  createAdaptiveLimiter,
  type AdaptiveDecision,
  type AdaptiveLimiter,
  type AdaptiveReleaseOptions,
} from '../../src';
import {
  createHttpAdaptiveLimiter,
  limitFetchHandlerAdaptively,
  type CallbackErrorEvent,
} from '../../src/adapter';
import type { HttpRequest } from '../../src/keys/http-request';
import type { ListenableResponse } from '../../src/http/response-close';

/** Node's response as far as the permit's release reads it: `end`, `close`, `writableEnded`, `statusCode`. */
class FakeResponse extends EventEmitter {
  closed = false;
  writableEnded = false;
  statusCode = 200;
  readonly req = { socket: new EventEmitter() };
  socket = this.req.socket;
  end(): this {
    this.writableEnded = true;
    return this;
  }
  /** The client left before the response ended. */
  reset(): void {
    this.closed = true;
    this.emit('close');
  }
}

const HTTP: HttpRequest = { remoteAddress: '127.0.0.1', url: '/', headers: {} };

/** A limiter whose permits report how they were released. */
function recording(): {
  limiter: AdaptiveLimiter;
  releases: Array<AdaptiveReleaseOptions | undefined>;
  partitions: string[];
} {
  const real = createAdaptiveLimiter({
    initial: 4,
    min: 4,
    max: 4,
    queue: false,
    eventLoop: false,
    shares: { checkout: 0.5 },
  });
  const releases: Array<AdaptiveReleaseOptions | undefined> = [];
  const partitions: string[] = [];
  const spy = (decision: AdaptiveDecision | undefined): AdaptiveDecision | undefined => {
    if (decision === undefined) return undefined;
    partitions.push(decision.partition);
    const permit = decision.permit;
    if (permit === undefined) return decision;
    return {
      ...decision,
      permit: {
        partition: permit.partition,
        get released() {
          return permit.released;
        },
        release(options) {
          releases.push(options);
          permit.release(options);
        },
      },
    };
  };
  const limiter: AdaptiveLimiter = {
    ...real,
    name: real.name,
    acquireSync: (partition, options) => spy(real.acquireSync(partition, options)),
    acquire: (partition, options) => {
      const decided = real.acquire(partition, options);
      return decided instanceof Promise
        ? decided.then((d) => spy(d) as AdaptiveDecision)
        : (spy(decided) as AdaptiveDecision);
    },
  };
  return { limiter, releases, partitions };
}

describe('createHttpAdaptiveLimiter: what a request tells the limiter as it ends', () => {
  test('a response ended below 500 is measured; a 5xx is ignored; a client that left first is dropped', () => {
    const { limiter, releases } = recording();
    const limit = createHttpAdaptiveLimiter({ limiter });
    const [ok, failed, left] = [new FakeResponse(), new FakeResponse(), new FakeResponse()];
    for (const response of [ok, failed, left])
      expect(limit.decideSync({}, HTTP, response as unknown as ListenableResponse)).toMatchObject({
        kind: 'next',
      });
    ok.end();
    failed.statusCode = 500;
    failed.end();
    left.reset();
    ok.reset(); // a close after the end gives nothing more
    expect(releases).toEqual([undefined, { ignore: true }, { dropped: true }]);
    expect(limiter.inFlight()).toBe(0);
  });

  test('a Fetch handler off Node: its Response is measured below 500, a 5xx or a throw ignored', async () => {
    const { limiter, releases } = recording();
    const statuses = [200, 404, 503];
    const handler = limitFetchHandlerAdaptively({ limiter }, async () => {
      const status = statuses.shift();
      if (status === undefined) throw new Error('handler failed');
      return new Response('ok', { status });
    });
    for (const status of [200, 404, 503])
      expect((await handler(new Request('http://x/'))).status).toBe(status);
    await expect(handler(new Request('http://x/'))).rejects.toThrow('handler failed');
    expect(releases).toEqual([undefined, undefined, { ignore: true }, { ignore: true }]);
    expect(limiter.inFlight()).toBe(0);
  });

  test("priority picks the partition; one that throws is reported, and the request counts in '*'", () => {
    const { limiter, partitions } = recording();
    const errors: Array<CallbackErrorEvent<{ path: string }>> = [];
    const limit = createHttpAdaptiveLimiter<{ path: string }, () => void>({
      limiter,
      priority: (request) => {
        if (request.path === '/boom') throw new Error('no route');
        return request.path === '/checkout' ? 'checkout' : 'browse';
      },
      onCallbackError: (event) => errors.push(event),
    });
    for (const path of ['/checkout', '/browse', '/boom'])
      limit.decideSync({ path }, HTTP, new FakeResponse() as unknown as ListenableResponse);
    expect(partitions).toEqual(['checkout', '*', '*']);
    expect(errors.map((e) => [e.source, e.error.message])).toEqual([
      ['priority', expect.stringContaining("the request is counted in the partition '*'")],
    ]);
  });

  test('a refusal: 503, Retry-After in whole seconds (at least 1), a short body', () => {
    const limiter = createAdaptiveLimiter({ initial: 1, min: 1, max: 1, queue: false, eventLoop: false });
    const limit = createHttpAdaptiveLimiter({ limiter });
    limit.decideSync({}, HTTP, new FakeResponse() as unknown as ListenableResponse);
    expect(limit.decideSync({}, HTTP, new FakeResponse() as unknown as ListenableResponse)).toEqual({
      kind: 'reply',
      status: 503,
      headers: [['Retry-After', '1']],
      type: 'text/plain; charset=utf-8',
      body: 'The server is overloaded, retry in 1 s.\n',
    });
  });
});
