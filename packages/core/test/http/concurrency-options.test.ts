import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { createConcurrencyLimiter } from '../../src';
import { createHttpConcurrencyLimiter } from '../../src/adapter';
import { errorOf } from '../contract/config-error-of';

describe('concurrencyLimit options', () => {
  test.each([
    [{}, 'max', 'is required'],
    [{ max: 0 }, 'max', 'whole number from 1'],
    [{ max: 1, leaseMs: 10 }, 'leaseMs', 'from 100 ms'],
    [{ max: 1, rate: '10r/s' }, 'rate', 'unknown option'],
    [{ max: 1, headers: 'draft-8' }, 'headers', 'unknown option'],
    [{ max: 1, status: 600 }, 'status', 'from 400 to 599'],
    [{ max: 1, fallback: { status: 200 } }, 'fallback', 'expected { status?, body'],
    [{ max: 1, onMissingKey: 'drop' }, 'onMissingKey', "expected one of 'skip'"],
    [{ max: 1, key: 42 }, 'key', 'expected nginx variables'],
    [{ max: 1, dryRun: 'yes' }, 'dryRun', 'true or false'],
    [{ max: 1, skip: true }, 'skip', 'must be a function'],
    [{ max: 1, trustProxy: 'everyone' }, 'trustProxy', ''],
    [{ limiter: {} }, 'limiter', 'expected a limiter from createConcurrencyLimiter()'],
    // A dry run never holds a request; a queue does.
    [{ max: 1, dryRun: true, queue: { maxWaitMs: 1000 } }, 'dryRun', 'cannot be combined with a queue'],
    [
      { limiter: createConcurrencyLimiter({ max: 1, queue: { maxWaitMs: 1000 } }), dryRun: true },
      'dryRun',
      'cannot be combined with a queue',
    ],
  ])('%j is refused at creation, naming %s', (options, option, accepted) => {
    const error = errorOf(() => createHttpConcurrencyLimiter(options as never));
    expect(error.option).toBe(option);
    expect(error.message).toContain(accepted);
  });

  test('an unknown option lists the HTTP options too: a typo may have meant one of them', () => {
    const error = errorOf(() => createHttpConcurrencyLimiter({ max: 1, keys: 'x' } as never));
    expect(error.code).toBe('SLUICE_UNKNOWN_OPTION');
    expect(error.message).toContain('max, store, prefix');
    expect(error.message).toContain('key, limiter, status');
  });

  test('a ready limiter takes no limiter options beside it', () => {
    const limiter = createConcurrencyLimiter({ max: 1 });
    expect(createHttpConcurrencyLimiter({ limiter }).limiter).toBe(limiter);
    expect(errorOf(() => createHttpConcurrencyLimiter({ limiter, max: 2 } as never)).option).toBe('max');
  });
});

test("nginx's limit_conn_zone $binary_remote_addr: by default the key is the client address", async () => {
  const limit = createHttpConcurrencyLimiter<object, () => void>({ max: 10 });
  const response = new ServerResponse(new IncomingMessage(new Socket()));
  limit.decideSync({}, { remoteAddress: '::ffff:203.0.113.9', url: '/', headers: {} }, response);
  expect(await limit.limiter.inFlight('203.0.113.9')).toBe(1);
});

describe('concurrencyLimit and a client whose connection is gone', () => {
  /** A request whose connection is gone: `socketPeerAddress` gave `undefined`. */
  const gone = { remoteAddress: undefined, url: '/checkout', headers: { 'user-id': 'u1' } };
  const response = new ServerResponse(new IncomingMessage(new Socket()));

  test.each([{}, { onMissingKey: 'shared' as const }])(
    'keyed by its address, it is refused with the status and takes no permit (%j)',
    async (options) => {
      const limit = createHttpConcurrencyLimiter<object, () => void>({ max: 1, status: 503, ...options });
      expect(limit.decideSync({}, gone, response)).toBeUndefined();
      expect(await limit.decide({}, gone, response)).toMatchObject({ kind: 'reply', status: 503 });
      expect(limit.limiter.stats().inFlight).toBe(0);
    },
  );

  test('dryRun lets it through, reported; a key that reads no address is not affected', async () => {
    const dry = createHttpConcurrencyLimiter<object, () => void>({ max: 1, dryRun: true });
    expect(await dry.decide({}, gone, response)).toEqual({
      kind: 'next',
      headers: [['Sluice-Dry-Run', 'rejected']],
    });
    const byUser = createHttpConcurrencyLimiter<object, () => void>({ max: 1, key: '$http_user_id' });
    expect(byUser.decideSync({}, gone, response)).toEqual({ kind: 'next', headers: [] });
    expect(byUser.limiter.stats().inFlight).toBe(1);
  });
});

test("a missing key with onMissingKey 'reject' is the client's error: 400, as rateLimit answers", async () => {
  const response = new ServerResponse(new IncomingMessage(new Socket()));
  const request = { remoteAddress: '203.0.113.9', url: '/checkout', headers: {} };
  const limit = createHttpConcurrencyLimiter<object, () => void>({
    max: 1,
    key: '$http_user_id',
    onMissingKey: 'reject',
    status: 503,
  });
  expect(await limit.decide({}, request, response)).toMatchObject({ kind: 'reply', status: 400 });
  expect(limit.limiter.stats().inFlight).toBe(0);
});
