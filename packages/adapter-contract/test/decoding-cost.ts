import { Agent, request as httpRequest } from 'node:http';
import type { AdapterDriver, TestApp } from './drivers';

/** 5 000 escapes that start a UTF-8 sequence none completes: the probe of issue #16, item 3. */
const INVALID = '%C3'.repeat(5000);
/**
 * As long, and as long once keyed: each escape decodes to '%', written back '%25', as each invalid
 * byte is written back '%C3'. The benign twin of a key that reads the hostile value.
 */
const PERCENT = '%25'.repeat(5000);
/** As long, nothing to decode. */
const PLAIN = 'a'.repeat(INVALID.length);
/** Requests of each kind, alternating, on one keep-alive connection. */
const ROUNDS = 30;

interface Probe {
  readonly path: string;
  readonly headers?: Record<string, string>;
}

/** One GET on `agent`'s connection; resolves its wall time in ns once the body is read. */
function timed(app: TestApp, agent: Agent, { path, headers = {} }: Probe): Promise<number> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${app.url}${path}`, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(Number(process.hrtime.bigint() - start))
          : reject(new Error(`status ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1] as number;

/** The median time of a hostile request over that of a benign one of the same length, alternating. */
async function costRatio(app: TestApp, hostile: Probe, benign: Probe): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const times = { hostile: [] as number[], benign: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      times.benign.push(await timed(app, agent, benign));
      times.hostile.push(await timed(app, agent, hostile));
    }
    return median(times.hostile) / median(times.benign);
  } finally {
    agent.destroy();
  }
}

/**
 * What a key costs before the decision (issue #16, item 3), on every adapter: a request of 5 000
 * invalid escapes costs about what a benign request of the same length costs, whether the key
 * reads them or only has to pass them by. Before, `?x=<5000 × %C3>&sku_id=1` took ~33 ms of CPU.
 */
export function describeDecodingCost(driver: AdapterDriver): void {
  describe(`decoding cost: ${driver.name}`, () => {
    const apps: TestApp[] = [];
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
    });
    const serve = async (key: string) => {
      const app = await driver.serve({ key, rate: '1000000000/1s' });
      apps.push(app);
      return app;
    };

    test('$arg_sku_id past an argument of invalid escapes', async () => {
      const app = await serve('$arg_sku_id');
      const ratio = await costRatio(
        app,
        { path: `/?x=${INVALID}&sku_id=1` },
        { path: `/?x=${PLAIN}&sku_id=1` },
      );
      expect(ratio).toBeLessThan(3);
    });

    test('$cookie_session past a cookie of invalid escapes, and $cookie_x reading it', async () => {
      const cookie = (value: string): Probe => ({ path: '/', headers: { Cookie: `x=${value}; session=1` } });
      const session = await serve('$cookie_session');
      expect(await costRatio(session, cookie(INVALID), cookie(PLAIN))).toBeLessThan(3);
      const x = await serve('$cookie_x');
      expect(await costRatio(x, cookie(INVALID), cookie(PERCENT))).toBeLessThan(3);
    });

    test('$uri of a path of invalid escapes', async () => {
      const app = await serve('$uri');
      const hostile = { path: `/${INVALID}` };
      if (driver.name.startsWith('fastify')) {
        // Fastify's router refuses a path that does not decode: the limit never sees it.
        await expect(costRatio(app, hostile, { path: `/${PERCENT}` })).rejects.toThrow('status 400');
        expect(app.handled).toBe(1);
        return;
      }
      expect(await costRatio(app, hostile, { path: `/${PERCENT}` })).toBeLessThan(3);
    });
  });
}
