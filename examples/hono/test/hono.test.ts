import { createAdaptorServer } from '@hono/node-server';
import request from 'supertest';
import { createApp } from '../src/app';

/** The example served as in production, by `@hono/node-server` (which gives sluice the client address). */
const server = () => createAdaptorServer({ fetch: createApp().fetch });

describe('hono example', () => {
  test('a SKU past 6 a minute gets the cached page, with Retry-After; another SKU is served', async () => {
    const app = server();
    const sku = (id: string) => request(app).get(`/sku/${id}`);
    for (let i = 0; i < 6; i++) expect((await sku('42')).body).toEqual({ sku: '42', stock: 3 });
    const cached = await sku('42');
    expect([cached.status, cached.body, cached.headers['retry-after']]).toEqual([
      200,
      { cached: true },
      '10',
    ]);
    expect((await sku('7')).body).toEqual({ sku: '7', stock: 3 });
  });

  test('the per-IP limit reports on every route; search answers', async () => {
    const app = server();
    const home = await request(app).get('/');
    expect(home.headers['ratelimit-policy']).toBe('"10r/s";q=21;w=3');
    expect((await request(app).get('/search?q=shoes')).body).toEqual({ q: 'shoes', results: [] });
  });
});
