// One candidate of the memory section, alone in its own process (run with --expose-gc).
import { addressKeys } from '../micro/micro';
import { HEAP_CANDIDATES } from './candidates';

const gc = (globalThis as { gc?: () => void }).gc;

function settledHeap(): number {
  if (gc === undefined) throw new Error('memory-child needs node --expose-gc');
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const id = process.env.BENCH_HEAP_CANDIDATE;
  const count = Number(process.env.BENCH_MEMORY_KEYS);
  const candidate = HEAP_CANDIDATES.find((c) => c.id === id);
  if (candidate === undefined || !(count > 0))
    throw new Error(`unknown candidate ${id} or key count ${count}`);
  // The key texts exist before the baseline: they are the caller's, not the store's. A store's own
  // copies and derived keys (prefixes, namespaces) count.
  const keys = addressKeys(count);
  const before = settledHeap();
  const store = candidate.make(count);
  for (const key of keys) await store.add(key);
  const after = settledHeap();
  await new Promise<void>((resolve) =>
    process.send?.(
      {
        type: 'result',
        bytesPerKey: (after - before) / count,
        heapBefore: before,
        heapAfter: after,
        held: store.held() ?? null,
      },
      undefined,
      {},
      () => resolve(),
    ),
  );
}

// Exit once the message is out: some stores keep timers that would hold the process.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    const message = error instanceof Error ? error.stack : String(error);
    if (process.send === undefined) console.error(message);
    process.send?.({ type: 'error', message }, undefined, {}, () => process.exit(1));
  },
);
