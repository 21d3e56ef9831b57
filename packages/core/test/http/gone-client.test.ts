import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createHttpLimiter,
  socketPeerAddress,
  type HttpLimitOptions,
  type HttpRequest,
  type RateLimitOptions,
} from '../../src/adapter';
import { fakeClock } from '../contract/fake-clock';

/** The HTTP options a case varies; each limit also has a rate and a fake clock. */
type Options = HttpLimitOptions<object, () => void> & { rate?: string; dryRun?: boolean };
const limiterOf = (options: Options) =>
  createHttpLimiter<object, () => void>({ clock: fakeClock(), ...options } as RateLimitOptions<
    object,
    () => void
  >);

/** A request whose connection is gone: `socketPeerAddress` gave `undefined`. */
const gone = (headers: HttpRequest['headers'] = {}): HttpRequest => ({
  remoteAddress: undefined,
  url: '/order',
  headers,
});
const live: HttpRequest = { remoteAddress: '203.0.113.9', url: '/order', headers: {} };

const REQUEST = 'GET / HTTP/1.1\r\nHost: sluice.test\r\n\r\n';

/**
 * An HTTP server on `where` (a port on loopback, or a Unix socket path) that reads
 * `socketPeerAddress` as a handler would, for one request sent raw by `send`.
 */
async function peerOfOneRequest(
  where: number | string,
  send: (server: Server) => Socket,
): Promise<{ peer: string | undefined; remoteAddress: string | undefined; after: string | undefined }> {
  const server = createServer();
  if (typeof where === 'number') server.listen(where, '127.0.0.1');
  else server.listen(where);
  await once(server, 'listening');
  const served = once(server, 'request') as Promise<[IncomingMessage]>;
  const client = send(server);
  client.on('error', () => undefined); // a reset is the test's own doing
  const [req] = await served;
  const found = { peer: socketPeerAddress(req.socket), remoteAddress: req.socket.remoteAddress };
  req.socket.destroy();
  client.destroy();
  await new Promise((resolve) => server.close(resolve));
  return { ...found, after: socketPeerAddress(req.socket) };
}

const portOf = (server: Server): number => (server.address() as { port: number }).port;

describe('socketPeerAddress: a connection that is gone, told from one without an IP peer', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-peer-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('TCP: the address while the client is there; undefined once it reset, or once destroyed', async () => {
    const stays = await peerOfOneRequest(0, (server) => {
      const socket = connect(portOf(server), '127.0.0.1', () => socket.write(REQUEST));
      return socket;
    });
    expect(stays).toEqual({ peer: '127.0.0.1', remoteAddress: '127.0.0.1', after: '127.0.0.1' });
    // The probe of issue #16: the request reaches the server after the client reset the connection.
    const resets = await peerOfOneRequest(0, (server) => {
      const socket = connect(portOf(server), '127.0.0.1', () => {
        socket.write(REQUEST);
        socket.resetAndDestroy();
      });
      return socket;
    });
    expect(resets).toEqual({ peer: undefined, remoteAddress: undefined, after: undefined });
  });

  test("a Unix socket has no IP peer: '' (a missing key) while open, undefined once destroyed", async () => {
    const path = join(dir, 'app.sock');
    const found = await peerOfOneRequest(path, () => {
      const socket = connect(path, () => socket.write(REQUEST));
      return socket;
    });
    expect(found).toEqual({ peer: '', remoteAddress: undefined, after: undefined });
    expect(socketPeerAddress(undefined)).toBeUndefined();
    expect(socketPeerAddress({ remoteAddress: '::1', destroyed: true })).toBe('::1');
  });
});

describe('a request whose connection is gone, against a limit keyed by the client address', () => {
  test.each<[string, Options]>([
    ['the default key', {}],
    ['$remote_addr', { key: '$remote_addr' }],
    ['a composed key', { key: '$http_user_id:$binary_remote_addr' }],
    ["onMissingKey 'shared'", { onMissingKey: 'shared' }],
    ['trustProxy', { trustProxy: true }],
  ])('%s: refused with the limit status, nothing consumed, synchronously or not', async (_name, options) => {
    const limits = limiterOf({ rate: '1/1h', status: 503, ...options });
    const headers = { 'user-id': 'u7', 'x-forwarded-for': '198.51.100.1' };
    for (let i = 0; i < 20; i++) {
      expect(limits.decideSync({}, gone(headers))).toBeUndefined();
      expect(await limits.decide({}, gone(headers))).toMatchObject({
        kind: 'reply',
        status: 503,
        headers: [],
      });
    }
    // A client that stays still has its whole quota.
    expect((await limits.decide({}, { ...live, headers })).kind).toBe('next');
  });

  test('dryRun reports the refusal and lets the request through; other limits still apply', async () => {
    const dry = limiterOf({ rate: '1/1h', dryRun: true });
    expect((await dry.decide({}, gone())).kind).toBe('next');
    const both = createHttpLimiter<object, () => void>([
      { rate: '1/1h', clock: fakeClock() },
      { key: '$http_user_id', rate: '1/1h', clock: fakeClock() },
    ]);
    expect(await both.decide({}, gone({ 'user-id': 'u7' }))).toMatchObject({ kind: 'reply', status: 429 });
    expect((await both.decide({}, { ...live, headers: { 'user-id': 'u7' } })).kind).toBe('next');
  });

  test("keys that do not read the address are unaffected; '' (a Unix socket) is a missing key", async () => {
    const byHeader = limiterOf({ key: '$http_user_id', rate: '1/1h' });
    expect(byHeader.decideSync({}, gone({ 'user-id': 'u7' }))?.kind).toBe('next');
    expect(byHeader.decideSync({}, gone({ 'user-id': 'u7' }))?.kind).toBe('reply');
    const byAddress = limiterOf({ rate: '1/1h' });
    const unix: HttpRequest = { remoteAddress: '', url: '/', headers: {} };
    expect(await byAddress.decide({}, unix)).toEqual({ kind: 'next', headers: [] });
    const rejecting = limiterOf({ rate: '1/1h', onMissingKey: 'reject' });
    expect(await rejecting.decide({}, unix)).toMatchObject({ kind: 'reply', status: 400 });
  });
});
