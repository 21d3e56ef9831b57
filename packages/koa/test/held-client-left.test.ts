import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { rateLimit } from '@sluice/koa';
import Koa from 'koa';
import Koa2 from 'koa2';

const FRAMEWORKS: Array<[string, () => Koa]> = [
  ['koa 3', () => new Koa()],
  ['koa 2', () => new (Koa2 as unknown as typeof Koa)()],
];

/**
 * A request the leaky bucket holds, whose client leaves meanwhile, is answered by no one: the
 * middleware around sluice's sees `ctx.respond === false`, not a 404 Koa would write for it.
 */
describe.each(FRAMEWORKS)('%s: a held request whose client left', (_name, create) => {
  test('gets no answer written, and the middleware around sees it', async () => {
    const seen: string[] = [];
    const app = create();
    app.silent = true; // Koa would log the reset of the socket the test drops
    app.use(async (ctx, next) => {
      await next();
      seen.push(ctx.respond === false ? 'no answer' : String(ctx.status));
    });
    app.use(rateLimit({ algorithm: 'leaky-bucket', rate: '1r/m', burst: 5 }));
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.on('error', () => undefined);
      await once(socket, 'connect');
      // Three pipelined: the first passes, the next two are held for a minute each.
      socket.write('GET / HTTP/1.1\r\nHost: sluice.test\r\n\r\n'.repeat(3));
      const deadline = Date.now() + 5000;
      while (seen.length < 1 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
      socket.destroy();
      while (seen.length < 3 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
      expect(seen).toEqual(['200', 'no answer', 'no answer']);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
