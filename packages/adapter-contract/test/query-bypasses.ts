import { fakeClock } from '../../core/test/contract/fake-clock';
import { MOUNTS, type AdapterDriver, type TestApp } from './drivers';
import { appReadings, keyOfReading, rawStatus, SEVERAL } from './raw-http';

/**
 * Queries that spell `sku_id=X` so that some framework reads `X` where a parser of the URL did not
 * (issue #16, item 2): after a fragment mark, after Fastify 4's `;`, as Express's (qs) arrays,
 * repeated, with an escaped name — and ones no framework reads as `X`.
 */
const SPELLINGS = [
  '/sku?a=1#&sku_id=X',
  '/sku#sku_id=X',
  '/sku;sku_id=X',
  '/sku?sku_id[]=X',
  '/sku?sku_id[0]=X',
  '/sku?sku_id%5B%5D=X',
  '/sku?sku_id=X&sku_id=X',
  '/sku?%73ku_id=X',
  '/sku?sku_id[a]=X',
  '/sku?sku_id=X%00',
];

/**
 * An argument given twice or more: whichever of its values the app reads (the first, the last,
 * all of them), the limit of each applies; values the frameworks read alike are one value.
 */
const REPEATS = [
  '/sku?sku_id=&sku_id=X',
  '/sku?sku_id=Y&sku_id=X',
  '/sku?sku_id=X&sku_id=Y&sku_id=X',
  '/sku?sku_id=X&sku_id=X',
  '/sku?sku_id[]=',
  '/sku?sku_id[0]=X',
  '/sku?sku_id[]=Z&sku_id=X',
  '/sku?sku_id[a]=Z&sku_id=X',
  '/sku?SKU_ID=Y',
  '/sku?sku_id=X&SKU_ID=Y',
  '/sku?sku_id=X+Y&sku_id=X%20Y',
  '/sku?sku_id=X;sku_id=Y',
  '/sku?sku_id=X%3Bsku_id%3DY',
];

/**
 * Bytes that are not UTF-8 and their look-alikes: Node's querystring (Express 5, Koa) reads
 * each invalid byte as U+FFFD, qs (Express 4) and fast-querystring (Fastify) keep an undecodable
 * value as sent, so `%25FF` is `%FF` there. A key that kept every byte apart gave the app's one
 * value several buckets.
 */
const INVALID = ['/sku?sku_id=%FE', '/sku?sku_id=%EF%BF%BD', '/sku?sku_id=%25FF', '/sku?sku_id=%C3'];

/** What issue #16 found each framework reading as `X` unseen by the limit: the test must cover them. */
const REPORTED: Record<string, readonly string[]> = {
  'express 4': ['/sku?sku_id[]=X', '/sku?sku_id[0]=X', '/sku?sku_id%5B%5D=X'],
  'fastify 5': ['/sku?a=1#&sku_id=X', '/sku#sku_id=X'],
  'fastify 4': ['/sku?a=1#&sku_id=X', '/sku#sku_id=X', '/sku;sku_id=X'],
};

/**
 * `$arg_` reads the query the app reads (issue #16, item 2), on every adapter: after
 * `?sku_id=X` used up a `1/1m` limit, every request in which the framework's parsed query gives
 * the app `X` is limited, sent raw so that no client re-encodes it.
 */
export function describeQueryBypasses(driver: AdapterDriver): void {
  describe(`$arg_ reads the query the app reads: ${driver.name}`, () => {
    const apps: TestApp[] = [];
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
    });

    test.each(MOUNTS)(
      'every spelling the framework reads as X is limited after ?sku_id=X (%s)',
      async (mount) => {
        const readings = (await appReadings(driver, 'sku_id', SPELLINGS)).map(keyOfReading);
        const readAsX = SPELLINGS.filter((_, i) => readings[i] === 'X');
        expect(readAsX).toEqual(expect.arrayContaining([...(REPORTED[driver.name] ?? [])]));
        // A repeated argument's one value and escaped names are read as X everywhere.
        expect(readAsX).toEqual(expect.arrayContaining(['/sku?sku_id=X&sku_id=X', '/sku?%73ku_id=X']));
        await expectLimitedAsRead(mount, '/sku?sku_id=X', SPELLINGS);
      },
    );

    test.each(MOUNTS)(
      'bytes that are not UTF-8 share a bucket exactly when the app reads them alike (%s)',
      async (mount) => {
        const [first, ...readings] = (
          await appReadings(driver, 'sku_id', ['/sku?sku_id=%FF', ...INVALID])
        ).map(keyOfReading);
        // Every framework reads at least one of them as it reads %FF.
        expect(readings).toContain(first);
        await expectLimitedAsRead(mount, '/sku?sku_id=%FF', INVALID);
      },
    );

    test.each(MOUNTS)(
      'an argument the app reads as several differing values is refused with 400, whichever it reads (%s)',
      async (mount) => {
        const readings = (await appReadings(driver, 'sku_id', REPEATS)).map(keyOfReading);
        // Every framework hands the app both values of a repeated argument.
        expect(readings.slice(0, 3)).toEqual([SEVERAL, SEVERAL, SEVERAL]);
        await expectLimitedAsRead(mount, '/sku?sku_id=X', REPEATS);
      },
    );

    /**
     * After `base` used up a `1/1m` limit on `$arg_sku_id`, each of `targets` is limited exactly
     * when the app reads the same `sku_id` as in `base`; read as another value, it has a bucket of
     * its own (its first use passes); not read at all, it has no key (not limited).
     */
    async function expectLimitedAsRead(mount: (typeof MOUNTS)[number], base: string, targets: string[]) {
      const [baseReading, ...readings] = (await appReadings(driver, 'sku_id', [base, ...targets])).map(
        keyOfReading,
      );
      const app = await driver.serve({ key: '$arg_sku_id', rate: '1/1m', clock: fakeClock() }, mount);
      apps.push(app);
      expect(await rawStatus(app, base)).toBe(200);
      const statuses = [];
      for (const target of targets) statuses.push([target, await rawStatus(app, target)]);
      const seen = new Set([baseReading]);
      const expected = targets.map((target, i) => {
        const reading = readings[i] as string;
        if (reading === SEVERAL) return [target, 400];
        const limited = seen.has(reading) && reading !== '';
        seen.add(reading);
        return [target, limited ? 429 : 200];
      });
      expect(statuses).toEqual(expected);
    }
  });
}
