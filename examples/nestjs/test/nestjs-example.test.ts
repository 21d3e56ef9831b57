import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { appModule } from '../src/app.module';

describe('nestjs example', () => {
  let app: INestApplication;
  let url: string;
  beforeEach(async () => {
    app = await NestFactory.create(
      appModule(() => 1_700_006_400_000),
      { logger: false, abortOnError: false },
    );
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterEach(() => app.close());

  test('every route carries the per-IP limit; /health is exempt', async () => {
    expect((await request(url).get('/')).headers['ratelimit-policy']).toBe('"10r/s";q=21;w=3');
    const health = await request(url).get('/health');
    expect([health.status, health.headers['ratelimit-policy']]).toEqual([200, undefined]);
  });

  test('/sku: 6 a minute per SKU, then the cached reply with Retry-After', async () => {
    const bodies = [];
    for (let i = 0; i < 7; i++) bodies.push((await request(url).get('/sku?sku_id=switch-2')).body);
    expect(bodies[5]).toEqual({ sku: 'switch-2', stock: 12, served: 'live' });
    const cached = await request(url).get('/sku?sku_id=switch-2');
    expect([cached.status, cached.body, cached.headers['retry-after']]).toEqual([
      200,
      { served: 'cached' },
      '10',
    ]);
    expect((await request(url).get('/sku?sku_id=ps6-pro')).body.served).toBe('live');
  });

  test('/orders: 2 a minute per user-id; 400 without one', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await request(url).get('/orders').set('user-id', 'ann')).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await request(url).get('/orders').set('user-id', 'bob')).status).toBe(200);
    const anonymous = await request(url).get('/orders').set('Accept', 'application/json');
    expect([anonymous.status, anonymous.body.error]).toEqual([400, 'missing_key']);
  });
});
