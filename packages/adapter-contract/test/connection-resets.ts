import { fakeClock } from '../../core/test/contract/fake-clock';
import { settle, until } from './delay-contract';
import { MOUNTS, type AdapterDriver, type ContractOptions, type TestApp } from './drivers';
import { rawStatus, writeAndReset } from './raw-http';

/** The probe of issue #16, item 1: 20 requests whose client resets the connection right after writing. */
const RESETS = 20;

/**
 * Clients that reset the connection as soon as their request is written (issue #16, item 1), on
 * every adapter: Node then no longer knows the peer's address (`remoteAddress` is `undefined`),
 * and a limit keyed by it must refuse such a request instead of seeing an empty key and passing it.
 */
export function describeConnectionResets(driver: AdapterDriver): void {
  describe(`connection resets: ${driver.name}`, () => {
    const apps: TestApp[] = [];
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
    });
    const serve = async (options: ContractOptions, mount: (typeof MOUNTS)[number]) => {
      const app = await driver.serve({ clock: fakeClock(), ...options }, mount);
      apps.push(app);
      let seen = 0;
      app.server.on('request', () => seen++);
      return { app, seen: () => seen };
    };

    test.each(MOUNTS)(
      `${RESETS} requests reset after writing, against rate 1/1h keyed by the address (%s): the handler runs at most once`,
      async (mount) => {
        const { app, seen } = await serve({ rate: '1/1h' }, mount);
        for (let i = 0; i < RESETS; i++) await writeAndReset(app, '/order');
        await until(() => seen() === RESETS, 'the server has read every request');
        // Each request is decided (a refusal or the handler) within a few turns of the loop.
        await settle();
        const ran = app.handled;
        expect(ran).toBeLessThanOrEqual(1);
        // A client that stays is limited as before: its turn was used only if a reset request ran.
        const stays = await rawStatus(app, '/order', { method: 'POST', headers: { 'Content-Length': '0' } });
        expect(stays).toBe(ran === 0 ? 200 : 429);
      },
    );

    test('a composed key with the address refuses too; a key without it serves the reset request', async () => {
      const composed = await serve({ key: '$http_user_id:$remote_addr', rate: '1/1h' }, 'middleware');
      for (let i = 0; i < 5; i++) await writeAndReset(composed.app, '/order');
      await until(() => composed.seen() === 5, 'the server has read every request');
      // The user-id header is absent: keyed ':<address>' when known, refused when not.
      await settle();
      expect(composed.app.handled).toBeLessThanOrEqual(1);

      const byHeader = await serve({ key: '$http_user_id', rate: '1/1h' }, 'middleware');
      for (let i = 0; i < 3; i++) await writeAndReset(byHeader.app, '/order');
      await until(() => byHeader.seen() === 3, 'the server has read every request');
      // No user-id: no key, not limited (onMissingKey 'skip'), as for a client that stays.
      await until(() => byHeader.app.handled === 3, 'the reset requests ran');
    });
  });
}
