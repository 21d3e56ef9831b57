import { start, type RunningShop } from '../src/server';

/**
 * What a copy of the example must get right before it faces the internet, over real sockets on
 * 127.0.0.1, where the shop's own reverse proxy would stand: every limit sees the client the
 * proxy names, and the metrics and dashboard answer only who may see them.
 */
describe('flash-sale shop, behind its reverse proxy on loopback', () => {
  let shop: RunningShop | undefined;
  const now = Date.UTC(2026, 10, 11);
  afterEach(async () => {
    await shop?.close();
    shop = undefined;
  });
  const base = (running: RunningShop) => running.url.replace('//localhost:', '//127.0.0.1:');

  test('two clients behind the trusted proxy get separate buckets on the shop-wide per-address limit', async () => {
    shop = await start({ port: 0, clock: () => now });
    const get = (client: string) =>
      fetch(`${base(shop as RunningShop)}/`, { headers: { 'x-forwarded-for': client } });
    // 10 a second with a burst of 20: 21 at once for one client, then 429.
    const first: number[] = [];
    for (let i = 0; i < 22; i++) first.push((await get('198.51.100.1')).status);
    expect(first.filter((status) => status === 200)).toHaveLength(21);
    expect(first[21]).toBe(429);
    // The next client is another bucket, not the proxy's address shared with the first.
    const second: number[] = [];
    for (let i = 0; i < 5; i++) second.push((await get('198.51.100.2')).status);
    expect(second).toEqual([200, 200, 200, 200, 200]);
  });

  describe('/metrics and the dashboard', () => {
    test('without a token: this machine only; a request through the proxy is refused', async () => {
      shop = await start({ port: 0, clock: () => now });
      const metrics = `${base(shop)}/metrics`;
      expect((await fetch(metrics)).status).toBe(200);
      for (const headers of [{ 'x-forwarded-for': '203.0.113.9' }, { via: '1.1 nginx' }]) {
        const refused = await fetch(metrics, { headers });
        expect([refused.status, await refused.text()]).toEqual([403, expect.not.stringContaining('sluice_')]);
        expect((await fetch(`${base(shop)}/_sluice/`, { headers })).status).toBe(403);
      }
    });

    test('with a token: only a request that carries it, as Bearer or as a Basic password', async () => {
      shop = await start({ port: 0, clock: () => now, opsToken: 's3cret-ops-token' });
      const metrics = `${base(shop)}/metrics`;
      // This machine is no exception once a token is set.
      const bare = await fetch(metrics);
      expect([bare.status, bare.headers.get('www-authenticate')]).toEqual([401, 'Basic realm="sluice ops"']);
      expect(await bare.text()).not.toContain('sluice_');
      for (const authorization of [
        'Bearer wrong',
        'Bearer s3cret-ops-token-and-more',
        'Basic Og==',
        's3cret-ops-token',
      ])
        expect([authorization, (await fetch(metrics, { headers: { authorization } })).status]).toEqual([
          authorization,
          401,
        ]);
      const bearer = await fetch(metrics, { headers: { authorization: 'Bearer s3cret-ops-token' } });
      expect(bearer.status).toBe(200);
      expect(await bearer.text()).toContain('sluice_');
      // A browser asked for credentials sends them as Basic, to the page and its event stream.
      const basic = `Basic ${Buffer.from('ops:s3cret-ops-token').toString('base64')}`;
      expect((await fetch(`${base(shop)}/_sluice/`)).status).toBe(401);
      const page = await fetch(`${base(shop)}/_sluice/`, { headers: { authorization: basic } });
      expect(page.status).toBe(200);
      const events = await fetch(`${base(shop)}/_sluice/events`, { headers: { authorization: basic } });
      expect([events.status, events.headers.get('content-type')]).toEqual([
        200,
        'text/event-stream; charset=utf-8',
      ]);
      await events.body?.cancel();
    });
  });
});
