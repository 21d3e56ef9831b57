import { createLimiter, SluiceConfigError } from '../../src';
import {
  callFallback,
  createHttpLimiter,
  type CallbackErrorEvent,
  type HttpHandlerOutcome,
  type HttpRequest,
  type RateLimitOptions,
  type RawResponse,
} from '../../src/adapter';
import { fakeClock, type FakeClock } from '../contract/fake-clock';

type Req = { id: number };
type Handler = (req: Req) => unknown;
type Options = RateLimitOptions<Req, Handler>;

const http = (headers: HttpRequest['headers'] = {}): HttpRequest => ({
  remoteAddress: '203.0.113.9',
  url: '/',
  headers,
});

let clock: FakeClock;
let events: Array<CallbackErrorEvent<Req>>;
beforeEach(() => {
  clock = fakeClock();
  events = [];
});
const limiterOf = (options: Partial<Options>) =>
  createHttpLimiter<Req, Handler>({
    rate: '2/1m',
    clock,
    onCallbackError: (event) => events.push(event),
    ...options,
  } as Options);

async function kinds(limits: ReturnType<typeof limiterOf>, n: number): Promise<string[]> {
  const seen: string[] = [];
  for (let id = 0; id < n; id++) seen.push((await limits.decide({ id }, http())).kind);
  return seen;
}

describe('a cost function that fails', () => {
  const failures: Array<[string, () => unknown, RegExp]> = [
    [
      'throws',
      () => {
        throw new Error('no price');
      },
      /^cost "Error: no price": the function threw; the request is counted at the limiter's default cost$/,
    ],
    ['rejects', () => Promise.reject(new TypeError('late')), /^cost "TypeError: late": the function threw/],
    [
      'throws a non-error',
      () => {
        throw 'plain';
      },
      /^cost "plain": the function threw/,
    ],
    [
      'returns NaN',
      () => NaN,
      /^cost NaN: the function returned it, expected a whole number from 0 to 1000000000; the request is counted/,
    ],
    ['returns a negative', () => -1, /^cost -1: /],
    ['returns a fraction', () => 1.5, /^cost 1\.5: /],
    ['returns Infinity', () => Infinity, /^cost Infinity: /],
    ['returns more than 1e9', () => 1e9 + 1, /^cost 1000000001: /],
    ['returns text', () => '2', /^cost "2": /],
    ['returns nothing', () => undefined, /^cost undefined: /],
  ];
  test.each(failures)(
    '%s: counted at the default cost 1, never free, never an error',
    async (_name, cost, message) => {
      const limits = limiterOf({ cost: cost as Options['cost'] });
      expect(await kinds(limits, 3)).toEqual(['next', 'next', 'reply']);
      expect(events).toHaveLength(3);
      const [event] = events;
      expect(event).toMatchObject({ source: 'cost', key: '203.0.113.9', request: { id: 0 } });
      expect(event?.error).toBeInstanceOf(SluiceConfigError);
      expect(event?.error).toMatchObject({ option: 'cost', code: 'SLUICE_INVALID_ARGUMENT' });
      expect(event?.error.message).toMatch(message);
    },
  );

  test('what was thrown is the cause', async () => {
    const thrown = new Error('no price');
    await limiterOf({
      cost: () => {
        throw thrown;
      },
    }).decide({ id: 1 }, http());
    expect(events[0]?.error.cause).toBe(thrown);
  });

  test("a ready limiter's own default cost is the one used", async () => {
    const limiter = createLimiter({ rate: '4/1m', clock, cost: 2 });
    const limits = createHttpLimiter<Req, Handler>({ limiter, cost: () => NaN });
    expect(await kinds(limits, 3)).toEqual(['next', 'next', 'reply']);
  });

  test('a valid cost from a function is used as is (0 only looks)', async () => {
    const limits = limiterOf({ cost: (req) => (req.id === 0 ? 0 : 2) });
    expect(await kinds(limits, 3)).toEqual(['next', 'next', 'reply']);
    expect(events).toEqual([]);
  });
});

describe('a key function that fails', () => {
  const failures: Array<[string, () => unknown]> = [
    [
      'throws',
      () => {
        throw new Error('no session');
      },
    ],
    ['rejects', () => Promise.reject(new Error('no session'))],
    ['returns {}', () => ({})],
    ['returns an array', () => ['a', 'b']],
    ['returns NaN', () => NaN],
    ['returns a symbol', () => Symbol('k')],
    ['returns true', () => true],
  ];
  test.each(failures)('%s: the request has no key, and onMissingKey decides', async (_name, key) => {
    const skip = limiterOf({ key: key as Options['key'] });
    expect(await kinds(skip, 3)).toEqual(['next', 'next', 'next']);
    expect(events.map((e) => [e.source, e.key, e.error.option])).toEqual([
      ['key', undefined, 'key'],
      ['key', undefined, 'key'],
      ['key', undefined, 'key'],
    ]);
    const reject = limiterOf({ key: key as Options['key'], onMissingKey: 'reject', status: 503 });
    expect(await reject.decide({ id: 0 }, http())).toMatchObject({ kind: 'reply', status: 400 });
    const shared = limiterOf({ key: key as Options['key'], onMissingKey: 'shared' });
    expect(await kinds(shared, 3)).toEqual(['next', 'next', 'reply']);
  });

  test('a missing key (undefined, null, empty) is not an error; a finite number is a key', async () => {
    for (const key of [undefined, null, '']) {
      expect(await kinds(limiterOf({ key: () => key }), 3)).toEqual(['next', 'next', 'next']);
    }
    expect(await kinds(limiterOf({ key: () => 7 as unknown as string }), 3)).toEqual([
      'next',
      'next',
      'reply',
    ]);
    expect(events).toEqual([]);
  });

  test('a trustProxy function that throws is a key failure too', async () => {
    const limits = limiterOf({
      trustProxy: () => {
        throw new Error('bad list');
      },
    });
    expect((await limits.decide({ id: 0 }, http({ 'x-forwarded-for': '198.51.100.1' }))).kind).toBe('next');
    expect(events[0]?.source).toBe('key');
  });
});

test('a skip function that fails: the request is not skipped', async () => {
  const limits = limiterOf({
    skip: (req) => {
      if (req.id > 0) throw new Error('flag service down');
      return Promise.reject(new Error('flag service down'));
    },
  });
  expect(await kinds(limits, 3)).toEqual(['next', 'next', 'reply']);
  expect(events.map((e) => [e.source, e.error.message])).toEqual(
    Array(3).fill([
      'skip',
      'skip "Error: flag service down": the function threw; the request is not skipped',
    ]),
  );
});

test('an onCallbackError listener that throws is ignored, and reported once', async () => {
  const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  const limits = createHttpLimiter<Req, Handler>({
    rate: '2/1m',
    clock,
    cost: () => NaN,
    onCallbackError: () => {
      throw new Error('logger down');
    },
  });
  expect(await kinds(limits, 3)).toEqual(['next', 'next', 'reply']);
  expect(warn).toHaveBeenCalledTimes(1);
  warn.mockRestore();
});

test('async listeners that reject (onLimit, onCallbackError, limiter events) are reported, never an unhandled rejection', async () => {
  const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  const unhandled: unknown[] = [];
  const track = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', track);
  try {
    const limits = createHttpLimiter<Req, Handler>({
      rate: '1/1m',
      clock,
      cost: () => NaN,
      onCallbackError: async () => {
        throw new Error('logger down');
      },
      onLimit: async () => {
        throw new Error('log sink down');
      },
    });
    expect(await kinds(limits, 3)).toEqual(['next', 'reply', 'reply']);
    const limiter = createLimiter({ rate: '1/1m', clock });
    limiter.on('limited', async () => {
      throw new Error('listener down');
    });
    await limiter.consume('k');
    await limiter.consume('k');
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
    // Once per listener: onCallbackError, onLimit and the 'limited' listener.
    expect(warn).toHaveBeenCalledTimes(3);
  } finally {
    process.off('unhandledRejection', track);
    warn.mockRestore();
  }
});

describe('a fallback handler', () => {
  async function handlerOutcome(accept = 'application/json'): Promise<HttpHandlerOutcome<Handler>> {
    const limits = limiterOf({ rate: '1/1m', fallback: (() => undefined) as Handler, key: '$http_user' });
    await limits.decide({ id: 0 }, http({ user: 'u' }));
    const outcome = await limits.decide({ id: 1 }, http({ user: 'u', accept }));
    if (outcome.kind !== 'handler') throw new Error(`expected a handler outcome, got ${outcome.kind}`);
    return outcome;
  }

  /** A ServerResponse stand-in recording what is written. */
  function rawResponse(sent = false) {
    const headers = new Map<string, string>([['x-partial', 'yes']]);
    const raw = {
      headersSent: sent,
      writableEnded: false,
      statusCode: 200,
      body: undefined as string | undefined,
      getHeaderNames: () => [...headers.keys()],
      removeHeader: (name: string) => headers.delete(name.toLowerCase()),
      setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), value),
      end(body?: string) {
        this.body = body;
        this.writableEnded = true;
      },
    };
    return { raw: raw satisfies RawResponse, headers };
  }

  test('that replies: nothing else is written', async () => {
    const outcome = await handlerOutcome();
    const { raw } = rawResponse();
    const takeOver = jest.fn();
    expect(await callFallback(outcome, [{ id: 1 }], raw, takeOver)).toBe(true);
    expect([raw.writableEnded, takeOver.mock.calls.length, events]).toEqual([false, 0, []]);
  });

  test.each<[string, Handler]>([
    [
      'throws',
      () => {
        throw new Error('template missing');
      },
    ],
    ['rejects', () => Promise.reject(new Error('template missing'))],
  ])('that %s before replying: the default rejection is sent, the error reported', async (_name, handler) => {
    const outcome = await handlerOutcome();
    const { raw, headers } = rawResponse();
    const takeOver = jest.fn();
    const broken = { ...outcome, handler };
    expect(await callFallback(broken, [{ id: 1 }], raw, takeOver)).toBe(false);
    expect(takeOver).toHaveBeenCalledTimes(1);
    expect(raw.statusCode).toBe(429);
    expect(Object.fromEntries(headers)).toEqual({
      'ratelimit-policy': '"1/1m";q=1;w=60',
      ratelimit: '"1/1m";r=0;t=60',
      'retry-after': '60',
      'content-type': 'application/json; charset=utf-8',
    });
    expect(JSON.parse(raw.body as string)).toEqual({
      error: 'rate_limited',
      message: 'Too many requests, retry in 60 s.',
      retryAfter: 60,
    });
    expect(events.map((e) => [e.source, e.key, e.error.message])).toEqual([
      [
        'fallback',
        'u',
        'fallback "Error: template missing": the function threw; the default rejection is sent instead (or the response ended, if the handler had begun it)',
      ],
    ]);
  });

  test('that throws after beginning its reply: the response is ended', async () => {
    const outcome = await handlerOutcome('text/plain');
    const { raw } = rawResponse(true);
    const handler: Handler = () => {
      throw new Error('mid-stream');
    };
    const broken = { ...outcome, handler };
    expect(await callFallback(broken, [{ id: 1 }], raw)).toBe(false);
    expect([raw.writableEnded, raw.body, raw.statusCode]).toEqual([true, undefined, 200]);
    expect(events).toHaveLength(1);
  });
});

describe('a static fallback is checked at creation, so it cannot fail at request time', () => {
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  test.each<[string, Record<string, unknown>]>([
    ['fallback.body', { body: circular }],
    ['fallback.body', { body: 10n }],
    [
      'fallback.body',
      {
        body: {
          toJSON: () => {
            throw new Error('no');
          },
        },
      },
    ],
    ['fallback.body', { body: undefined }],
    ['fallback.headers', { body: '', headers: { 'X-Bad': 'a\r\nSet-Cookie: x=1' } }],
    ['fallback.headers', { body: '', headers: { 'bad name': 'v' } }],
    ['fallback.headers', { body: '', headers: { 'X-Nul': 'a\u0000b' } }],
    ['fallback.type', { body: '', type: 'text/html\r\nX: y' }],
  ])('invalid %s throws SluiceConfigError', (option, fallback) => {
    const attempt = () => createHttpLimiter({ rate: '6r/m', fallback } as unknown as Options);
    expect(attempt).toThrow(SluiceConfigError);
    expect(attempt).toThrow(expect.objectContaining({ option }));
  });
});
