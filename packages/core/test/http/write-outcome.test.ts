import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { MemoryStore } from '../../src';
import {
  createHttpConcurrencyLimiter,
  createHttpLimiter,
  decideAndWrite,
  writeReplyOutcome,
  writeResponseOutcome,
  type AnyHttpOutcome,
  type HttpRequest,
  type NodeFallback,
  type ReplyLike,
} from '../../src/adapter';
import { fakeClock } from '../contract/fake-clock';

type Outcome = AnyHttpOutcome<NodeFallback<object, ServerResponse>>;

const http: HttpRequest = { remoteAddress: '203.0.113.9', url: '/order', headers: { accept: '*/*' } };

function response(): ServerResponse {
  const req = new IncomingMessage(new Socket());
  req.method = 'GET';
  return new ServerResponse(req);
}

/** What a written response ended with: the body, or `undefined` when not ended. */
function bodyOf(res: ServerResponse): () => string | undefined {
  let body: string | undefined;
  const end = res.end.bind(res);
  res.end = ((chunk?: unknown) => {
    body = typeof chunk === 'string' ? chunk : '';
    return end();
  }) as typeof res.end;
  return () => body;
}

describe('writeResponseOutcome', () => {
  test('next: sets the headers, in order, and passes', () => {
    const res = response();
    const pass = writeResponseOutcome({}, res, {
      kind: 'next',
      headers: [
        ['RateLimit-Policy', '"10/1s";q=10;w=1'],
        ['RateLimit', '"10/1s";r=9;t=1'],
      ],
    } as Outcome);
    expect(pass).toBe(true);
    expect(res.getHeaderNames()).toEqual(['ratelimit-policy', 'ratelimit']);
    expect(res.getHeader('RateLimit')).toBe('"10/1s";r=9;t=1');
  });

  test('reply: status, headers, content type and body, and stops', () => {
    const res = response();
    const body = bodyOf(res);
    const pass = writeResponseOutcome({}, res, {
      kind: 'reply',
      headers: [['Retry-After', '6']],
      status: 429,
      type: 'text/plain; charset=utf-8',
      body: 'Too many requests.\n',
    } as Outcome);
    expect(pass).toBe(false);
    expect(res.statusCode).toBe(429);
    expect(res.getHeader('Retry-After')).toBe('6');
    expect(res.getHeader('Content-Type')).toBe('text/plain; charset=utf-8');
    expect(body()).toBe('Too many requests.\n');
  });

  test('gone: writes nothing and stops', () => {
    const res = response();
    expect(writeResponseOutcome({}, res, { kind: 'gone' } as Outcome)).toBe(false);
    expect(res.getHeaderNames()).toEqual([]);
    expect(res.writableEnded).toBe(false);
  });

  test('handler: called with (request, response, decision) after the headers; a throw still gets a reply', async () => {
    const args: unknown[] = [];
    const limits = createHttpLimiter<object, NodeFallback<object, ServerResponse>>({
      rate: '1r/m',
      clock: fakeClock(),
      fallback: (...given) => {
        args.push(...given);
        throw new Error('boom');
      },
    });
    const request = {};
    limits.decideSync(request, http);
    const outcome = limits.decideSync(request, http) as Outcome;
    expect(outcome.kind).toBe('handler');
    const res = response();
    const body = bodyOf(res);
    await expect(writeResponseOutcome(request, res, outcome)).resolves.toBe(false);
    expect(args).toEqual([request, res, (outcome as { decision: unknown }).decision]);
    expect(res.statusCode).toBe(429);
    expect(body()).toMatch(/retry in/);
  });
});

describe('writeReplyOutcome', () => {
  /** A reply with Fastify's API, recording the calls. */
  function reply(): ReplyLike & { calls: string[] } {
    const calls: string[] = [];
    const self = {
      calls,
      raw: response(),
      header: (name: string, value: string) => calls.push(`header ${name}: ${value}`),
      code: (status: number) => {
        calls.push(`code ${status}`);
        return {
          type: (type: string) => {
            calls.push(`type ${type}`);
            return { send: (body: string) => calls.push(`send ${body}`) };
          },
        };
      },
      send: (payload?: unknown) => calls.push(`send ${JSON.stringify(payload)}`),
      hijack: () => calls.push('hijack'),
    };
    return self;
  }

  test('reply: headers, then code, type and send', () => {
    const target = reply();
    const pass = writeReplyOutcome({}, target, {
      kind: 'reply',
      headers: [['Retry-After', '2']],
      status: 503,
      type: 'application/json',
      body: '{}',
    });
    expect(pass).toBe(false);
    expect(target.calls).toEqual(['header Retry-After: 2', 'code 503', 'type application/json', 'send {}']);
  });

  test('gone: hijacks the reply, so the framework sends nothing more', () => {
    const target = reply();
    expect(writeReplyOutcome({}, target, { kind: 'gone' })).toBe(false);
    expect(target.calls).toEqual(['hijack']);
  });
});

describe('decideAndWrite', () => {
  test('an in-process store decides without a promise', () => {
    const limit = createHttpConcurrencyLimiter<object, NodeFallback<object, ServerResponse>>({
      max: 1,
      store: new MemoryStore(),
    });
    const res = response();
    const seen: string[] = [];
    const pass = decideAndWrite(limit, {}, res, http, res, (_request, _response, outcome) => {
      seen.push(outcome.kind);
      return outcome.kind === 'next';
    });
    expect(pass).toBe(true);
    expect(seen).toEqual(['next']);
  });

  test('without a synchronous answer, the outcome is written once the promise settles', async () => {
    const reply: Outcome = { kind: 'reply', headers: [], status: 503, type: 'text/plain', body: '' };
    const asked: string[] = [];
    // What a limit on a remote store does: nothing synchronously, the answer later.
    const limit = {
      decideSync: () => {
        asked.push('sync');
        return undefined;
      },
      decide: () => {
        asked.push('async');
        return Promise.resolve(reply);
      },
    };
    const res = response();
    const seen: Outcome[] = [];
    const pass = decideAndWrite(limit, {}, res, http, res, (_request, _response, outcome) => {
      seen.push(outcome);
      return false;
    });
    expect(asked).toEqual(['sync', 'async']);
    expect(seen).toEqual([]);
    await expect(pass).resolves.toBe(false);
    expect(seen).toEqual([reply]);
  });
});
