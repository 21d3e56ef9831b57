import { MemoryStore, type Store, type StoreRequest, type Verdict } from '../../src';

/** How the flaky store answers: normally, by throwing, never, or after a delay. */
export type FlakyMode = 'ok' | 'throw' | 'hang' | { slowMs: number };

/**
 * A remote-looking store (no consumeSync) over a MemoryStore whose failures a test switches on
 * and off. A fault injector for the limiter's own guard, not a stand-in for Redis: the Redis
 * failure tests kill real redis-server processes.
 */
export class FlakyStore implements Store {
  mode: FlakyMode = 'ok';
  calls = 0;
  readonly #inner = new MemoryStore();

  async consume(request: StoreRequest): Promise<Verdict> {
    this.calls++;
    const mode = this.mode;
    if (mode === 'throw') throw new Error('ECONNREFUSED 127.0.0.1:1');
    if (mode === 'hang') return new Promise<Verdict>(() => undefined);
    if (typeof mode === 'object') await new Promise((resolve) => setTimeout(resolve, mode.slowMs));
    return this.#inner.consumeSync(request);
  }

  reset(request: Omit<StoreRequest, 'cost'>): Promise<void> {
    return this.#inner.reset(request);
  }
}
