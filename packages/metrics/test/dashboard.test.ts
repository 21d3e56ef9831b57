import type { IncomingMessage } from 'node:http';
import { createLimiter } from '@sluice/core';
import { dashboard, isLoopbackRequest, prometheus, type Dashboard } from '@sluice/metrics';
import { Registry } from 'prom-client';
import { errorOf } from '../../core/test/contract/config-error-of';
import { quantileMs } from '../src/dashboard/history';
import { FRAMEWORKS, mountedApp, type MountedApp } from './mount-apps';
import { readEvents, type EventReader, type ServerEvent } from './sse-client';

interface Frame {
  name: string;
  totals: { admitted: number; limited: number };
  rate: [number, number, number];
  hotKeys: Array<{ key: string; requests: number }>;
}
const framesOf = (event: ServerEvent): Frame[] => (event.data as { limiters: Frame[] }).limiters;
const orders = (event: ServerEvent): Frame | undefined => framesOf(event).find((f) => f.name === 'orders');

describe.each(FRAMEWORKS)('dashboard mounted under a path in %s', (framework) => {
  let app: MountedApp;
  let board: Dashboard;
  let reader: EventReader | undefined;
  beforeEach(async () => {
    const metrics = prometheus({ registry: new Registry() });
    board = dashboard({ metrics, authorize: 'loopback', intervalMs: 100 });
    app = await mountedApp(framework, metrics, board);
  });
  afterEach(async () => {
    reader?.close();
    reader = undefined;
    board.close();
    await app.close();
  });

  test('the page, with or without a trailing slash, self-contained and locked down', async () => {
    for (const path of ['/ops/sluice', '/ops/sluice/']) {
      const response = await fetch(`${app.url}${path}`);
      expect([path, response.status]).toEqual([path, 200]);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = response.headers.get('content-security-policy') as string;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("connect-src 'self'");
      const html = await response.text();
      expect(html).toContain('<title>sluice: limiters</title>');
      // Nothing loaded from elsewhere: no src or href but the inline icon.
      expect(html.match(/(?:src|href)="[^"]*"/g)).toEqual(['href="data:,"']);
    }
  });

  test('the event stream follows the requests live: totals, rates and hot keys', async () => {
    reader = await readEvents(`${app.url}/ops/sluice/events`);
    expect(reader.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await reader.next((e) => e.event === 'history');
    for (const user of ['ann', 'ann', 'ann', 'bob']) await fetch(`${app.url}/buy?user=${user}`);
    const tick = await reader.next((e) => e.event === 'tick' && orders(e)?.totals.admitted === 3);
    const frame = orders(tick) as Frame;
    expect(frame.totals).toMatchObject({ admitted: 3, limited: 1 });
    expect(frame.hotKeys.map((k) => [k.key, Math.round(k.requests)])).toEqual([
      ['ann', 3],
      ['bob', 1],
    ]);
    // A page opening now gets the chart so far: the rates of every tick.
    const late = await readEvents(`${app.url}/ops/sluice/events`);
    try {
      const history = await late.next((e) => e.event === 'history');
      const series = (history.data as { limiters: Array<{ name: string; admitted: number[] }> }).limiters;
      const admitted = series.find((s) => s.name === 'orders')?.admitted ?? [];
      // Per second over 100 ms ticks: 3 admissions are 30 a second in all.
      expect(admitted.reduce((a, b) => a + b, 0)).toBeCloseTo(30, 6);
    } finally {
      late.close();
    }
  });

  test("authorize: 'loopback' refuses a request through a proxy (403), the page and its stream", async () => {
    const proxied = await fetch(`${app.url}/ops/sluice`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(proxied.status).toBe(403);
    const events = await fetch(`${app.url}/ops/sluice/events`, { headers: { forwarded: 'for=203.0.113.9' } });
    expect(events.status).toBe(403);
    // nginx's default proxy_pass adds no header naming the client, yet a Via or X-Forwarded-Proto often.
    const plain = await fetch(`${app.url}/ops/sluice`, { headers: { via: '1.1 nginx' } });
    expect(plain.status).toBe(403);
  });
});

describe('dashboard()', () => {
  const metrics = prometheus({ registry: new Registry() });

  test('authorize decides, sync or async; one that throws or rejects answers 403', async () => {
    const { createServer } = await import('node:http');
    for (const [authorize, status] of [
      [() => true, 200],
      [() => false, 403],
      [async () => true, 200],
      [async () => Promise.reject(new Error('down')), 403],
      [
        () => {
          throw new Error('bad');
        },
        403,
      ],
      [() => 'yes' as unknown as boolean, 403],
    ] as const) {
      const board = dashboard({ metrics, authorize });
      const server = createServer(board).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      try {
        const { port } = server.address() as { port: number };
        // Through a proxy header: loopback alone would not let it in, authorize does.
        const response = await fetch(`http://127.0.0.1:${port}/`, {
          headers: { 'x-forwarded-for': '198.51.100.1' },
        });
        expect(response.status).toBe(status);
      } finally {
        board.close();
        server.close();
      }
    }
  });

  test('bounded: past maxClients streams, 503; other methods, 405', async () => {
    const { createServer } = await import('node:http');
    const board = dashboard({ metrics, authorize: 'loopback', maxClients: 2, intervalMs: 100 });
    const server = createServer(board).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const readers: EventReader[] = [];
    try {
      readers.push(await readEvents(`http://127.0.0.1:${port}/events`));
      readers.push(await readEvents(`http://127.0.0.1:${port}/events`));
      const third = await fetch(`http://127.0.0.1:${port}/events`);
      expect([third.status, third.headers.get('retry-after')]).toEqual([503, '10']);
      readers.pop()?.close();
      // The closed stream's place is free again.
      await new Promise((resolve) => setTimeout(resolve, 50));
      readers.push(await readEvents(`http://127.0.0.1:${port}/events`));
      expect(readers[1]?.response.statusCode).toBe(200);
      const post = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST' });
      expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    } finally {
      for (const reader of readers) reader.close();
      board.close();
      server.closeAllConnections();
      server.close();
    }
  });

  test('a client gone while an async authorize decided takes no stream place (none left to leak)', async () => {
    const { createServer } = await import('node:http');
    const { connect } = await import('node:net');
    // authorize answers when the test says: after the client has gone.
    const pending: Array<(ok: boolean) => void> = [];
    const board = dashboard({
      metrics,
      maxClients: 2,
      intervalMs: 100,
      authorize: () => new Promise<boolean>((resolve) => pending.push(resolve)),
    });
    const server = createServer(board).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const closed: Array<Promise<unknown>> = [];
    server.on('connection', (socket) => closed.push(new Promise((resolve) => socket.once('close', resolve))));
    const readers: EventReader[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const socket = connect(port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write('GET /events HTTP/1.1\r\nHost: x\r\n\r\n');
        while (pending.length <= i) await new Promise((resolve) => setImmediate(resolve));
        socket.destroy();
      }
      await Promise.all(closed); // the server saw every one of them leave
      for (const resolve of pending.splice(0)) resolve(true);
      await new Promise((resolve) => setImmediate(resolve));
      // Both places are still free for pages that stay.
      const answer = async (): Promise<EventReader> => {
        const reading = readEvents(`http://127.0.0.1:${port}/events`);
        while (pending.length === 0) await new Promise((resolve) => setImmediate(resolve));
        pending.shift()?.(true);
        return reading;
      };
      readers.push(await answer(), await answer());
      expect(readers.map((r) => r.response.statusCode)).toEqual([200, 200]);
    } finally {
      for (const reader of readers) reader.close();
      board.close();
      server.closeAllConnections();
      server.close();
    }
  });

  test('a metrics clock that throws skips an update: nothing thrown from the timer, updates resume', async () => {
    const { createServer } = await import('node:http');
    let broken = false;
    let asked = 0;
    const withClock = prometheus({
      registry: new Registry(),
      clock: () => {
        asked++;
        if (broken) throw new Error('clock down');
        return Date.now();
      },
    });
    const limiter = createLimiter({ rate: '10/1m', metrics: withClock, name: 'orders' });
    await limiter.consume('ann');
    const board = dashboard({ metrics: withClock, authorize: 'loopback', intervalMs: 100 });
    const server = createServer(board).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const reader = await readEvents(`http://127.0.0.1:${port}/events`);
    try {
      await reader.next((e) => e.event === 'tick');
      broken = true;
      const before = asked;
      // The next updates read the clock (for the hot keys) and skip; none throws out of the timer.
      while (asked < before + 2) await new Promise((resolve) => setTimeout(resolve, 10));
      broken = false;
      const tick = await reader.next((e) => e.event === 'tick');
      expect(framesOf(tick).map((f) => f.name)).toEqual(['orders']);
    } finally {
      reader.close();
      board.close();
      server.closeAllConnections();
      server.close();
    }
  });

  test('the history is fixed in size whatever the uptime', async () => {
    const { History, HISTORY_POINTS } = await import('../src/dashboard/history');
    const { countsOf } = await import('../src/counting/sluice-metrics');
    const own = prometheus({ registry: new Registry() });
    const limiter = createLimiter({ name: 'h', rate: '1000r/s', metrics: own });
    const history = new History(countsOf(own) as NonNullable<ReturnType<typeof countsOf>>, 1000, () => []);
    for (let i = 0; i < HISTORY_POINTS * 3; i++) {
      limiter.consumeSync(`k${i}`);
      history.sample();
    }
    const [series] = history.series();
    expect(series?.admitted).toHaveLength(HISTORY_POINTS);
    expect(series?.admitted.every((v) => v === 1)).toBe(true);
  });

  test('store health: calls and percentiles of the last minute, in ms', async () => {
    const { History } = await import('../src/dashboard/history');
    const { countsOf } = await import('../src/counting/sluice-metrics');
    const own = prometheus({ registry: new Registry() });
    const recorder = own.limiter({ name: 'r', store: 'redis', remote: true, dryRun: false });
    const history = new History(countsOf(own) as NonNullable<ReturnType<typeof countsOf>>, 1000, () => []);
    for (let i = 0; i < 99; i++) recorder.storeCall(0.0008);
    recorder.storeCall(0.02);
    history.sample();
    const health = history.frames()[0]?.storeHealth;
    expect(health).toMatchObject({ up: true, calls: 100 });
    expect(health?.p50).toBeGreaterThan(0.5);
    expect(health?.p50).toBeLessThanOrEqual(1);
    expect(health?.p99).toBeLessThanOrEqual(1);
    // 61 ticks later, only the last minute counts: one slow call.
    for (let i = 0; i < 61; i++) history.sample();
    recorder.storeCall(0.02);
    history.sample();
    expect(history.frames()[0]?.storeHealth).toMatchObject({ calls: 1, p50: 17.5 });
  });

  test('latency percentiles from the buckets, interpolated as histogram_quantile does', () => {
    // 100 calls: 50 under 0.5 ms, 40 in (1 ms, 2.5 ms], 10 in (25 ms, 50 ms].
    const counts = [50, 0, 40, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0];
    expect(quantileMs(counts, 100, 0.5)).toBeCloseTo(0.5, 6);
    expect(quantileMs(counts, 100, 0.9)).toBeCloseTo(2.5, 6);
    expect(quantileMs(counts, 100, 0.99)).toBeCloseTo(47.5, 6);
    expect(quantileMs(counts, 0, 0.5)).toBeNull();
    expect(quantileMs([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3], 3, 0.5)).toBe(2500);
  });

  test('loopback: 127.0.0.0/8, ::1 and v4-mapped, without proxy headers', () => {
    const req = (remoteAddress: string | undefined, headers: Record<string, string> = {}) =>
      ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;
    expect(isLoopbackRequest(req('127.0.0.1'))).toBe(true);
    expect(isLoopbackRequest(req('127.8.9.10'))).toBe(true);
    expect(isLoopbackRequest(req('::1'))).toBe(true);
    expect(isLoopbackRequest(req('::ffff:127.0.0.1'))).toBe(true);
    expect(isLoopbackRequest(req('10.0.0.1'))).toBe(false);
    expect(isLoopbackRequest(req('::ffff:10.0.0.1'))).toBe(false);
    expect(isLoopbackRequest(req('1270::1'))).toBe(false);
    expect(isLoopbackRequest(req(undefined))).toBe(false);
    expect(isLoopbackRequest(req('127.0.0.1', { 'x-real-ip': '203.0.113.1' }))).toBe(false);
    // What proxies that add no client address still add: each marks a request as forwarded.
    for (const [name, value] of [
      ['via', '1.1 nginx'],
      ['x-forwarded-host', 'shop.example'],
      ['x-forwarded-proto', 'https'],
      ['x-forwarded-port', '443'],
      ['x-client-ip', '203.0.113.1'],
      ['cf-connecting-ip', '203.0.113.1'],
      ['true-client-ip', '203.0.113.1'],
    ])
      expect([name, isLoopbackRequest(req('127.0.0.1', { [name as string]: value as string }))]).toEqual([
        name,
        false,
      ]);
  });

  test('bad options fail at construction, naming the option', () => {
    const authorize = 'loopback';
    expect(errorOf(() => dashboard({ metrics, authorize, color: 'red' } as never)).option).toBe('color');
    expect(errorOf(() => dashboard({ metrics: {} as never, authorize })).option).toBe('metrics');
    expect(errorOf(() => dashboard({ authorize } as never)).option).toBe('metrics');
    expect(errorOf(() => dashboard({ metrics, authorize: true as never })).option).toBe('authorize');
    expect(errorOf(() => dashboard({ metrics, authorize: 'local' as never })).option).toBe('authorize');
    expect(errorOf(() => dashboard({ metrics, authorize, intervalMs: 10 })).option).toBe('intervalMs');
    expect(errorOf(() => dashboard({ metrics, authorize, maxClients: 0 })).option).toBe('maxClients');
    for (const bad of [0, 1.5, 1001, '4'])
      expect(
        errorOf(() => dashboard({ metrics, authorize, maxClientsPerAddress: bad as never })).option,
      ).toBe('maxClientsPerAddress');
  });

  test('authorize is required: a function, or the explicit loopback', () => {
    // The page shows client keys (addresses, user ids): who may see it is always said.
    const missing = errorOf(() => dashboard({ metrics } as never));
    expect([missing.option, missing.code]).toEqual(['authorize', 'SLUICE_MISSING_OPTION']);
    expect(missing.message).toMatch(/^authorize undefined: required/);
    expect(missing.message).toContain('(req) => boolean | Promise<boolean>');
    expect(missing.message).toContain("'loopback'");
    dashboard({ metrics, authorize: 'loopback' }).close();
    dashboard({ metrics, authorize: () => true }).close();
  });

  test('streams are bounded per client address too: one address cannot take every place', async () => {
    const { createServer } = await import('node:http');
    const board = dashboard({
      metrics,
      authorize: () => true,
      maxClients: 3,
      maxClientsPerAddress: 2,
      intervalMs: 100,
    });
    const server = createServer(board).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const url = `http://127.0.0.1:${port}/events`;
    const readers: EventReader[] = [];
    try {
      readers.push(await readEvents(url), await readEvents(url));
      // A third stream from the same address is refused; another address still gets one.
      const third = await readEvents(url);
      third.close();
      expect([third.response.statusCode, third.response.headers['retry-after']]).toEqual([429, '10']);
      readers.push(await readEvents(url, {}, '127.0.0.2'));
      expect(readers.map((r) => r.response.statusCode)).toEqual([200, 200, 200]);
      // The total bound still holds for every address.
      const fourth = await readEvents(url, {}, '127.0.0.3');
      fourth.close();
      expect(fourth.response.statusCode).toBe(503);
      // A stream that ends gives its address's place back.
      readers.shift()?.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      readers.push(await readEvents(url));
      expect(readers.at(-1)?.response.statusCode).toBe(200);
    } finally {
      for (const reader of readers) reader.close();
      board.close();
      server.closeAllConnections();
      server.close();
    }
  });

  test('an IPv4 client is one address whether the server listens on IPv4 or on both stacks', async () => {
    const { createServer } = await import('node:http');
    const board = dashboard({ metrics, authorize: 'loopback', maxClientsPerAddress: 1, intervalMs: 100 });
    // Listening on '::', a dual-stack socket sees 127.0.0.1 as ::ffff:127.0.0.1.
    const server = createServer(board).listen(0, '::');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const readers: EventReader[] = [];
    try {
      readers.push(await readEvents(`http://127.0.0.1:${port}/events`));
      const again = await readEvents(`http://127.0.0.1:${port}/events`);
      again.close();
      expect(again.response.statusCode).toBe(429);
    } finally {
      for (const reader of readers) reader.close();
      board.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
