import { RedisStore, type Store } from '@sluice/core';
import request from 'supertest';
import { useRedisServer } from '../../../packages/core/test/harness/redis-fixtures';
import { createApp } from '../src/app';

const MINUTE = 60_000;

/** The login app on a clock the test moves, and a way to try a password as one client. */
function loginApp(store?: Store) {
  let now = Date.UTC(2026, 11, 7, 9);
  const app = createApp({ store, clock: () => now, trustProxy: 'loopback' });
  const login = (password: string, username = 'ann', address = '203.0.113.7') =>
    request(app)
      .post('/login')
      .set('x-forwarded-for', address) // the test speaks as the app's proxy on loopback
      .send({ username, password });
  return { login, advance: (ms: number) => (now += ms) };
}

describe.each([
  ['memory', () => undefined],
  ['Redis', () => new RedisStore({ client: redis.client() })],
] as const)('examples/login (%s)', (_name, storeOf) => {
  beforeEach(async () => {
    await redis.client().flushall(); // each test starts from no limits and no blocks
  });

  test('the sixth wrong password is refused and blocks the user name for 15 minutes', async () => {
    const { login, advance } = loginApp(storeOf());
    for (let i = 0; i < 5; i++) expect((await login('guess')).status).toBe(401);
    const refused = await login('guess');
    expect([refused.status, refused.headers['retry-after']]).toEqual([429, '900']);
    // The right password does not help during the block; the block's time runs down.
    advance(10 * MINUTE);
    const blocked = await login('correct horse');
    expect([blocked.status, blocked.headers['retry-after']]).toEqual([429, '300']);
    expect(blocked.headers.ratelimit).toMatch(/;r=0;/);
    advance(5 * MINUTE);
    expect((await login('correct horse')).status).toBe(200);
  });

  test('four typos, then the right password: not blocked, and one attempt left', async () => {
    const { login } = loginApp(storeOf());
    for (let i = 0; i < 4; i++) expect((await login('typo')).status).toBe(401);
    const welcome = await login('correct horse');
    expect(welcome.status).toBe(200);
    expect(welcome.body).toEqual({ welcome: 'ann' });
    expect((await login('typo')).status).toBe(401);
    expect((await login('typo')).status).toBe(429);
  });

  test('successful logins never count', async () => {
    const { login } = loginApp(storeOf());
    for (let i = 0; i < 25; i++) expect((await login('correct horse')).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await login('typo')).status).toBe(401);
  });

  test('a repeat offender is blocked twice as long; another user name is not', async () => {
    const { login, advance } = loginApp(storeOf());
    for (let i = 0; i < 5; i++) await login('guess');
    expect((await login('guess')).headers['retry-after']).toBe('900');
    advance(15 * MINUTE);
    for (let i = 0; i < 5; i++) expect((await login('guess')).status).toBe(401);
    expect((await login('guess')).headers['retry-after']).toBe('1800');
    expect((await login('nope', 'bob')).status).toBe(401);
  });

  test('one address spraying many user names is blocked after 20 failures', async () => {
    const { login } = loginApp(storeOf());
    for (let i = 0; i < 20; i++) expect((await login('guess', `user${i}`)).status).toBe(401);
    const refused = await login('correct horse');
    expect([refused.status, refused.headers['retry-after']]).toEqual([429, '900']);
    expect((await login('correct horse', 'ann', '203.0.113.8')).status).toBe(200);
  });
});

const redis = useRedisServer();
