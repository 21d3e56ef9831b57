import {
  createLimiter,
  MemoryStore,
  type Decision,
  type Store,
  type StoreRequest,
  type Verdict,
} from '../../src';
import { describeRulesContract } from '../contract/rules-contract';
import { describeStoreContract } from '../contract/store-contract';
import { fakeClock } from '../contract/fake-clock';
import { FlakyStore } from '../resilience/flaky-store';
import { errorOf } from '../contract/config-error-of';

describeRulesContract('MemoryStore', () => new MemoryStore());
describeRulesContract('a remote store (guarded path)', () => new FlakyStore());
// The single-rule contract is untouched by rules support, on the guarded path too.
describeStoreContract('a remote store with consumeRules (FlakyStore)', () => new FlakyStore());

describe('several limits: options', () => {
  test('a list in rate: each entry parsed like rate, sharing algorithm and burst, each with its default burst', () => {
    const limiter = createLimiter({ rate: ['10r/s', '1000/1h'] });
    expect(limiter.policies.map((p) => [p.algorithm, p.limit, p.windowMs, p.burst, p.source])).toEqual([
      ['gcra', 10, 1000, 0, '10r/s'],
      ['gcra', 1000, 3_600_000, 999, '1000/1h'],
    ]);
    expect(limiter.policy).toBe(limiter.policies[0]);
    const shared = createLimiter({ rate: ['10r/s', '100/1m'], algorithm: 'token-bucket', burst: 4 });
    expect(shared.policies.map((p) => [p.algorithm, p.burst])).toEqual([
      ['token-bucket', 4],
      ['token-bucket', 4],
    ]);
  });

  test('rules: each with its own algorithm', () => {
    const limiter = createLimiter({
      rules: [{ rate: '5r/s', algorithm: 'leaky-bucket', burst: 3, nodelay: true }, { rate: '100/1d' }],
    });
    expect(limiter.policies.map((p) => [p.algorithm, p.burst, p.nodelay])).toEqual([
      ['leaky-bucket', 3, true],
      ['gcra', 99, false],
    ]);
  });

  test('one rule is exactly a single rate: no limits in decisions', async () => {
    const listed = createLimiter({ rate: ['5/1s'], clock: fakeClock() });
    const plain = createLimiter({ rate: '5/1s', clock: fakeClock() });
    expect(listed.policies).toEqual(plain.policies);
    const d = await listed.consume('k');
    expect(d).toEqual(await plain.consume('k'));
    expect(d.limits).toBeUndefined();
  });

  test.each([
    [{ rate: [] }, 'rate', /a list of 1 to 16 limits/],
    [{ rate: Array.from({ length: 17 }, () => '1r/s') }, 'rate', /a list of 1 to 16/],
    [{ rate: ['10r/s', '6r/x'] }, 'rate[1]', /unit must be r\/s or r\/m/],
    [{ rate: ['10r/s', '1/1m'], burst: -1 }, 'burst', /whole number/],
    [{ rules: [] }, 'rules', /a list of 1 to 16 limits/],
    [{ rules: 'x' }, 'rules', /a list/],
    [{ rules: [{ rate: '1r/s' }, 'x'] }, 'rules[1]', /expected \{ rate/],
    [{ rules: [{ rate: '1r/s' }, {}] }, 'rules[1].rate', /is required/],
    [{ rules: [{ rate: '1r/s', burts: 2 }] }, 'rules[0].burts', /unknown rule field/],
    [
      { rules: [{ rate: '1r/s', nodelay: true }] },
      'rules[0].nodelay',
      /only applies to algorithm 'leaky-bucket'/,
    ],
    [{ rules: [{ rate: '1r/s' }], rate: '1r/s' }, 'rules', /cannot be combined with rate/],
    [{ rules: [{ rate: '1r/s' }], algorithm: 'gcra' }, 'algorithm', /set it in each rule/],
  ])('%j → SluiceConfigError on %s', (options, option, message) => {
    const error = errorOf(() => createLimiter(options as never));
    expect(error.option).toBe(option);
    expect(error.message).toMatch(message);
  });

  test('a store without consumeRules is refused at creation, naming the store', () => {
    const bare: Store = {
      consume: (request: StoreRequest) => new MemoryStore().consume(request),
      reset: () => Promise.resolve(),
    };
    expect(() => createLimiter({ rate: ['1r/s', '10/1m'], store: bare })).toThrow(
      expect.objectContaining({
        option: 'store',
        message: expect.stringMatching(/consumeRules and resetRules/),
      }),
    );
    // One rule needs nothing more than before.
    expect(() => createLimiter({ rate: ['1r/s'], store: bare })).not.toThrow();
    const insurance: Store = { consume: bare.consume, reset: bare.reset };
    expect(() =>
      createLimiter({ rate: ['1r/s', '10/1m'], store: new FlakyStore(), onStoreError: { insurance } }),
    ).toThrow(expect.objectContaining({ option: 'onStoreError.insurance' }));
  });
});

describe('several limits: the in-process path', () => {
  test('consumeSync decides every rule in one step', () => {
    const limiter = createLimiter({ rate: ['3/1s', '4/1m'], clock: fakeClock() });
    const decisions = Array.from({ length: 5 }, () => limiter.consumeSync('k') as Decision);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(decisions[3]?.policy.source).toBe('3/1s');
    expect(limiter.consumeSync('k', { cost: 0 })?.limits?.map((l) => l.remaining)).toEqual([0, 1]);
  });
});

describe('several limits: a remote store, guarded', () => {
  const rules = ['3/1m', '5/1m'];

  test('default insurance: the memory store decides every rule while the store is down', async () => {
    const store = new FlakyStore();
    const limiter = createLimiter({ rate: rules, store, clock: fakeClock() });
    store.mode = 'throw';
    const decisions: Decision[] = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume('k'));
    expect(decisions.map((d) => [d.allowed, d.degraded])).toEqual([
      [true, 'insurance'],
      [true, 'insurance'],
      [true, 'insurance'],
      [false, 'insurance'],
    ]);
    expect(decisions[3]?.limits?.map((l) => l.remaining)).toEqual([0, 2]);
  });

  test("'fail-open' and 'fail-closed' answer for every rule", async () => {
    const store = new FlakyStore();
    store.mode = 'throw';
    const open = await createLimiter({ rate: rules, store, onStoreError: 'fail-open' }).consume('k');
    expect(open).toMatchObject({ allowed: true, degraded: 'fail-open', limit: 3, remaining: 3 });
    expect(open.limits?.map((l) => l.limit)).toEqual([3, 5]);
    const closed = await createLimiter({ rate: rules, store, onStoreError: 'fail-closed' }).consume('k');
    expect(closed).toMatchObject({ allowed: false, degraded: 'fail-closed', reason: 'store-unavailable' });
  });

  test('a hanging store costs timeoutMs, then the circuit spares it', async () => {
    const store = new FlakyStore();
    const limiter = createLimiter({ rate: rules, store, timeoutMs: 20 });
    store.mode = 'hang';
    const errors: unknown[] = [];
    limiter.on('storeError', (e) => errors.push(e));
    for (let i = 0; i < 6; i++) expect((await limiter.consume('k')).degraded).toBe('insurance');
    expect(store.calls).toBe(3);
    expect(errors).toHaveLength(3);
  });

  test('the block cache answers a flood on a limited key without asking the store, per the rule that blocked', async () => {
    const store = new FlakyStore();
    const clock = fakeClock();
    const limiter = createLimiter({ rate: ['2/1s', '10/1m'], store, clock });
    await limiter.consume('k');
    await limiter.consume('k');
    const refused = await limiter.consume('k');
    expect(refused).toMatchObject({ allowed: false, reason: 'limited' });
    const calls = store.calls;
    for (let i = 0; i < 50; i++) {
      const d = await limiter.consume('k');
      expect(d).toMatchObject({ allowed: false, reason: 'limited', limit: 2 });
      expect(d.policy).toBe(limiter.policies[0]);
      expect(d.limits).toHaveLength(2);
    }
    expect(store.calls).toBe(calls);
    clock.advance(refused.retryAfterMs);
    expect((await limiter.consume('k')).allowed).toBe(true);
  });
});

describe('several limits: the store step itself', () => {
  test('MemoryStore.consumeRulesSync writes every state or none', () => {
    const store = new MemoryStore();
    const limiter = createLimiter({ rate: ['2/1m', '3/1m'] });
    const request = { prefix: 'p', key: 'k', policies: limiter.policies, cost: 1, nowMs: 1_000 };
    const remaining = (verdicts: Verdict[]): number[] => verdicts.map((v) => v.remaining);
    expect(remaining(store.consumeRulesSync(request))).toEqual([1, 2]);
    expect(remaining(store.consumeRulesSync(request))).toEqual([0, 1]);
    // The first rule refuses: the second keeps its unit.
    expect(remaining(store.consumeRulesSync(request))).toEqual([0, 1]);
    expect(remaining(store.consumeRulesSync({ ...request, cost: 0 }))).toEqual([0, 1]);
  });
});
