import { createAdaptiveLimiter, type AdaptiveDecision } from '@sluice/core';
import { Registry } from 'prom-client';
import { prometheus } from '@sluice/metrics';

/** The sample lines of one metric family in an exposition, without HELP and TYPE. */
async function samples(registry: Registry, name: string): Promise<string[]> {
  const text = await registry.metrics();
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

const now = (decision: AdaptiveDecision | Promise<AdaptiveDecision>): AdaptiveDecision => {
  if (decision instanceof Promise) throw new Error('expected a decision at once');
  return decision;
};

describe('adaptive limiters in prometheus()', () => {
  test('limit, in flight, queued and shed by partition, read at scrape time; decisions by outcome', async () => {
    const registry = new Registry();
    const metrics = prometheus({ registry });
    const limiter = createAdaptiveLimiter({
      name: 'shop',
      initial: 10,
      min: 10,
      max: 10,
      shares: { checkout: 0.7, browse: 0.3 },
      queue: false,
      eventLoop: false,
      metrics,
    });
    const permits = Array.from({ length: 10 }, () => now(limiter.acquire('browse')).permit);
    expect(now(limiter.acquire('checkout')).allowed).toBe(false);
    expect(now(limiter.acquire('browse')).allowed).toBe(false);
    expect(await samples(registry, 'sluice_adaptive_limit')).toEqual([
      'sluice_adaptive_limit{limiter="shop",partition="checkout"} 7',
      'sluice_adaptive_limit{limiter="shop",partition="browse"} 3',
      'sluice_adaptive_limit{limiter="shop",partition="*"} 0',
    ]);
    expect(await samples(registry, 'sluice_in_flight')).toEqual([
      'sluice_in_flight{limiter="shop",partition="checkout"} 0',
      'sluice_in_flight{limiter="shop",partition="browse"} 10',
      'sluice_in_flight{limiter="shop",partition="*"} 0',
    ]);
    expect(await samples(registry, 'sluice_shed_total')).toEqual([
      'sluice_shed_total{limiter="shop",partition="checkout"} 1',
      'sluice_shed_total{limiter="shop",partition="browse"} 1',
      'sluice_shed_total{limiter="shop",partition="*"} 0',
    ]);
    expect(await samples(registry, 'sluice_queued')).toContain(
      'sluice_queued{limiter="shop",partition="browse"} 0',
    );
    expect(await samples(registry, 'sluice_decisions_total')).toEqual([
      'sluice_decisions_total{limiter="shop",outcome="admitted"} 10',
      'sluice_decisions_total{limiter="shop",outcome="delayed"} 0',
      'sluice_decisions_total{limiter="shop",outcome="limited"} 2',
    ]);
    for (const permit of permits) permit?.release();
    expect(await samples(registry, 'sluice_in_flight')).toContain(
      'sluice_in_flight{limiter="shop",partition="browse"} 0',
    );
  });
});
