import type { FastifyInstance } from 'fastify';
import request from 'supertest';
import { buildApp } from '../src/app';

describe('fastify-routes example', () => {
  let app: FastifyInstance;
  beforeEach(async () => {
    app = await buildApp(() => 1_700_006_400_000);
    await app.ready();
  });
  afterEach(() => app.close());

  test('every route carries the plugin limit; /health is exempt', async () => {
    expect((await request(app.server).get('/')).headers['ratelimit-policy']).toBe('21;w=3');
    const health = await request(app.server).get('/health');
    expect([health.status, health.headers['ratelimit-policy']]).toEqual([200, undefined]);
  });

  test('/login: 5 attempts, then 503 with Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await request(app.server).post('/login')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 503]);
    expect((await request(app.server).post('/login')).headers['retry-after']).toBe('180');
  });

  test('/items/:id: a bucket per path, degraded past 3', async () => {
    const bodies = [];
    for (let i = 0; i < 4; i++) bodies.push((await request(app.server).get('/items/42')).body);
    expect(bodies[3]).toEqual({ cached: true, note: 'busy: cached item' });
    expect((await request(app.server).get('/items/43')).body).toEqual({ id: '43', cached: false });
  });

  test('/beta: a dry run reports and never refuses', async () => {
    await request(app.server).get('/beta');
    const second = await request(app.server).get('/beta');
    expect([second.status, second.headers['sluice-dry-run']]).toEqual([200, 'rejected']);
  });
});
