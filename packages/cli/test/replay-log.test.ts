import { replay, type ReplayResult } from '../src/replay/replay';
import { FIXTURES, runCli } from './run-cli';
import { join } from 'node:path';

// test/fixtures/access.log, by key ($remote_addr), after spreading each second's lines evenly:
//   192.0.2.10         6 requests in 12:00:00 (0, 166, 333, 500, 666, 833 ms), then 12:00:02.000,
//                      12:00:03.500 (POST /cart) and 12:00:04.000
//   192.0.2.20         12:00:01.000
//   2001:db8:1:2::/64  12:00:02.333 and .666 (two addresses of one /64: one key)
//   192.0.2.30         12:00:03.000 (GET /health, no sku_id)
// plus a line that is no log line (8), a blank line (12) and a line whose time is broken (15).
// gcra 1r/s burst=2 (3 at once, then one a second) refuses 192.0.2.10's 4th, 5th and 6th;
// fixed-window 2/1m admits two per key in the minute.
const POLICIES = ['gcra 1r/s burst=2', 'fixed-window 2/1m'];

const counts = (result: ReplayResult) =>
  result.policies.map(({ label, admitted, delayed, limited }) => ({ label, admitted, delayed, limited }));

describe('replaying the committed access log', () => {
  test.each(['access.log', 'access.jsonl', 'access.csv'])(
    '%s: the same requests, the same decisions in every format',
    async (file) => {
      const result = await replay({
        input: { kind: 'log', path: join(FIXTURES, file) },
        policies: POLICIES,
      });
      expect(result.format).toBe(file.endsWith('.log') ? 'combined' : file.endsWith('.csv') ? 'csv' : 'json');
      expect(result.requests).toBe(13);
      expect(result.noKey).toBe(0);
      expect(counts(result)).toEqual([
        { label: 'gcra 1r/s burst=2', admitted: 10, delayed: 0, limited: 3 },
        { label: 'fixed-window 2/1m', admitted: 6, delayed: 0, limited: 7 },
      ]);
      expect(result.policies[0]?.limitedKeys).toEqual([{ key: '192.0.2.10', limited: 3, error: 0 }]);
      expect(result.policies[1]?.limitedKeys).toEqual([{ key: '192.0.2.10', limited: 7, error: 0 }]);
      expect(result.policies[0]?.worstSecond).toEqual({
        startMs: Date.UTC(2024, 4, 1, 12, 0, 0),
        requests: 6,
        admitted: 3,
        delayed: 0,
        limited: 3,
      });
      // The two bad lines are counted with their line numbers; the rest was replayed.
      expect(result.unparsed).toBe(2);
      expect(result.lineErrors.map((error) => error.line)).toEqual(file.endsWith('.csv') ? [9, 16] : [8, 15]);
    },
  );

  test('an IPv6 client is keyed by its /64, as the adapters do', async () => {
    const result = await replay({
      input: { kind: 'log', path: join(FIXTURES, 'access.log') },
      policies: ['gcra 1r/s'],
    });
    const keys = result.policies[0]?.limitedKeys.map(({ key }) => key);
    expect(keys).toContain('2001:db8:1:2::/64');
    expect(result.hotKeys.map(({ key }) => key)).not.toContain('2001:db8:1:2::1');
  });

  test("--key '$arg_sku_id' keys by the query argument; requests without it are not limited", async () => {
    const result = await replay({
      input: { kind: 'log', path: join(FIXTURES, 'access.log'), key: '$arg_sku_id' },
      policies: POLICIES,
    });
    expect(result.noKey).toBe(2); // GET /health and POST /cart
    expect(counts(result)).toEqual([
      { label: 'gcra 1r/s burst=2', admitted: 7, delayed: 0, limited: 4 },
      { label: 'fixed-window 2/1m', admitted: 3, delayed: 0, limited: 8 },
    ]);
    expect(result.policies[1]?.limitedKeys).toEqual([{ key: '1001', limited: 8, error: 0 }]);
  });

  test('composed keys and headers: $http_user_agent:$arg_sku_id', async () => {
    const result = await replay({
      input: { kind: 'log', path: join(FIXTURES, 'access.log'), key: '$http_user_agent:$arg_sku_id' },
      policies: ['fixed-window 1/1m'],
    });
    expect(result.hotKeys.map(({ key, requests }) => [key, requests])).toEqual([
      ['curl/8.0:1001', 7],
      ['Mozilla/5.0:1001', 3],
      ['curl/8.0:', 1],
      ['curl/8.0:1002', 1],
      ['kube-probe/1.29:', 1],
    ]);
  });

  test('--key-field keys a JSON log by a field as it is', async () => {
    const result = await replay({
      input: { kind: 'log', path: join(FIXTURES, 'access.jsonl'), keyField: 'request_uri' },
      policies: ['fixed-window 2/1m'],
    });
    expect(result.hotKeys[0]).toMatchObject({ key: '/sku?sku_id=1001', requests: 10 });
  });

  test("--spread none replays a second's requests at its start: one burst", async () => {
    const result = await replay({
      input: { kind: 'log', path: join(FIXTURES, 'access.log'), spread: false },
      policies: ['gcra 1r/s burst=2'],
    });
    // 192.0.2.10's six at 12:00:00.000: 3 admitted; then 12:00:02, :03 and :04 each admitted.
    expect(counts(result)).toEqual([{ label: 'gcra 1r/s burst=2', admitted: 10, delayed: 0, limited: 3 }]);
  });

  test('--trust-proxy keys by the X-Forwarded-For client behind the proxies, as the adapters do', async () => {
    const path = join(FIXTURES, 'behind-proxy.log');
    const keys = async (trustProxy?: string) => {
      const result = await replay({
        input: { kind: 'log', path, ...(trustProxy === undefined ? {} : { trustProxy }) },
        policies: ['gcra 1r/s'],
      });
      return result.hotKeys.map(({ key, requests }) => [key, requests]);
    };
    // Without it, the load balancer is the only client.
    expect(await keys()).toEqual([['10.0.0.5', 4]]);
    expect(await keys('10.0.0.0/8')).toEqual([
      ['203.0.113.7', 3],
      ['198.51.100.2', 1],
    ]);
  });

  test('the command prints the counts, the keys limited most and the bad lines', async () => {
    const run = await runCli(['replay', 'access.log', ...POLICIES.flatMap((p) => ['--policy', p])]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('13 requests, 2024-05-01 12:00:00Z to 2024-05-01 12:00:04Z');
    expect(run.stdout).toMatch(
      /gcra 1r\/s burst=2 +10 +76\.9 % +0 +3 +23\.1 % +2024-05-01 12:00:00Z: 3 of 6 limited/,
    );
    expect(run.stdout).toMatch(/fixed-window 2\/1m +192\.0\.2\.10 \(7\)/);
    expect(run.stdout).toContain(
      'line 8: not a combined or common log line: "this line is not an access log line"',
    );
    expect(run.stdout).toContain('line 15: time [01/May/2024:12:00:0x +0000] is not a time');
  });

  test('--json gives the same summary to scripts', async () => {
    const run = await runCli(['replay', 'access.csv', '--policy', 'gcra 1r/s burst=2', '--json']);
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as { requests: number; policies: Array<{ limited: number }> };
    expect(summary.requests).toBe(13);
    expect(summary.policies[0]?.limited).toBe(3);
  });
});
