import fc from 'fast-check';
import { hashOf, KeyTable } from '../src/hot-keys/key-table';

describe('KeyTable (open addressing, deletion by shifting back)', () => {
  test('agrees with a Map through any sequence of inserts and deletes, colliding hashes and wrap-around included', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 12, max: 17 })), {
          maxLength: 400,
        }),
        (ops) => {
          const slots = 8;
          const table = new KeyTable(slots);
          const model = new Map<string, { slot: number; hash: number }>();
          const free = Array.from({ length: slots }, (_, i) => i);
          for (const [insert, id, hash] of ops) {
            const key = `k${id}`;
            // Rows 12 to 15, 0 and 1 of the 16: most collide, and runs wrap past the table's end.
            const known = model.get(key);
            if (insert && known === undefined && free.length > 0) {
              const slot = free.pop() as number;
              table.set(key, hash, slot);
              model.set(key, { slot, hash });
            } else if (!insert && known !== undefined) {
              table.delete(known.slot);
              model.delete(key);
              free.push(known.slot);
            }
            for (const [k, { slot, hash: h }] of model) if (table.get(k, h) !== slot) return false;
            if (table.get('absent', hash) !== -1) return false;
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });

  test('hashOf is FNV-1a over UTF-16 code units', () => {
    expect(hashOf('') >>> 0).toBe(0x811c9dc5);
    expect(hashOf('a') >>> 0).toBe(0xe40c292c);
  });
});
