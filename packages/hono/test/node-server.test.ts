import { rateLimit } from '@sluice/hono';
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import { serveFetch } from './serve';

/** Time stands still: these tests never wait for a limit to refill. */
const still = () => 1_700_006_400_000;

/**
 * On `@hono/node-server` the rate-limit headers go on Node's response, which the server merges
 * into whatever it writes: any kind of response carries them, a header of the handler's own wins,
 * and a refusal keeps what earlier Hono middleware set.
 */
describe('Hono on @hono/node-server: the headers', () => {
  test('on a raw Response, on a handler that sets its own, and on a refusal behind CORS', async () => {
    const app = new Hono();
    app.use(cors({ origin: 'https://shop.test' }));
    app.use(rateLimit({ rate: '2/1m', clock: still }));
    app.get('/raw', () => new Response('raw', { headers: { 'X-Raw': '1' } }));
    app.get('/own', (c) => c.text('own', 200, { RateLimit: 'mine' }));
    const served = await serveFetch(app.fetch);
    try {
      const get = (path: string) => fetch(served.url + path, { headers: { Origin: 'https://shop.test' } });
      const raw = await get('/raw');
      expect([raw.status, raw.headers.get('x-raw'), raw.headers.get('ratelimit')]).toEqual([
        200,
        '1',
        '"2/1m";r=1;t=30',
      ]);
      expect((await get('/own')).headers.get('ratelimit')).toBe('mine');
      const refused = await get('/raw');
      expect([
        refused.status,
        refused.headers.get('retry-after'),
        refused.headers.get('ratelimit'),
        refused.headers.get('access-control-allow-origin'),
        refused.headers.get('content-type'),
      ]).toEqual([429, '30', '"2/1m";r=0;t=60', 'https://shop.test', 'text/plain; charset=utf-8']);
    } finally {
      await served.close();
    }
  });
});
