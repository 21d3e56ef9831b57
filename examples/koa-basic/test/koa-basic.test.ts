import request from 'supertest';
import { createApp } from '../src/app';

describe('koa-basic example', () => {
  test('the decorated profile: 2 a minute per user-id, refused without one', async () => {
    const server = createApp().callback();
    const ann = () => request(server).get('/profile').set('user-id', 'ann');
    expect((await ann()).body).toEqual({ user: 'ann' });
    expect((await ann()).status).toBe(200);
    const third = await ann();
    expect([third.status, third.headers['retry-after']]).toEqual([429, '30']);
    expect((await request(server).get('/profile').set('user-id', 'bob')).status).toBe(200);
    expect((await request(server).get('/profile')).status).toBe(400);
  });

  test('the decorated search costs by page size; the per-IP limit reports on every route', async () => {
    const server = createApp().callback();
    const big = await request(server).get('/search?q=shoes&limit=50');
    expect(big.status).toBe(200);
    expect(big.headers.ratelimit).toBe('"10/1m";r=5;t=30');
    expect((await request(server).get('/search?limit=50')).status).toBe(200);
    expect((await request(server).get('/search')).status).toBe(429);
    expect((await request(server).get('/')).headers['ratelimit-policy']).toBe('"10r/s";q=21;w=3');
  });
});
