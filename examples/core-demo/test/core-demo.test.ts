import { SCENARIOS, burst, describeDecision } from '../src/burst';

describe('core demo', () => {
  test('every scenario admits its burst, rejects the rest, and refills after a second', async () => {
    const rows = await Promise.all(SCENARIOS.map(([title, options]) => burst(title, options, 6)));
    const table = Object.fromEntries(rows.map((r) => [r.title, r.decisions.map(describeDecision).join(' ')]));
    expect(table).toEqual({
      'gcra 2r/s burst=3 (redis-cell CL.THROTTLE sku 3 2 1)': '✓ ✓ ✓ ✓ ✗500 ✗500 ✓ ✓ ✗500',
      'leaky-bucket 2r/s burst=3 nodelay (nginx limit_req)': '✓ ✓ ✓ ✓ ✗500 ✗500 ✓ ✓ ✗500',
      'leaky-bucket 2r/s burst=3 (nginx, delayed)': '✓ …500 …1000 …1500 ✗500 ✗500 …1000 …1500 ✗500',
      'token-bucket replenish 2/s, capacity 4 (Spring Cloud Gateway)': '✓ ✓ ✓ ✓ ✗500 ✗500 ✓ ✓ ✗500',
      'fixed-window 4/1s': '✓ ✓ ✓ ✓ ✗1000 ✗1000 ✓ ✓ ✓',
      'sliding-window 4/1s': '✓ ✓ ✓ ✓ ✗1250 ✗1250 ✗250 ✗250 ✗250',
      'sliding-log 4/1s': '✓ ✓ ✓ ✓ ✗1000 ✗1000 ✓ ✓ ✓',
    });
  });
});
