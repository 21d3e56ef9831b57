/**
 * The scope names of classes whose limits are named after them (Nest's controllers): a class
 * keeps its own name unless another has the same, which would share its buckets on a shared
 * store; then `name(where)` (where it is mounted: a route path and version), then `name(where)#2`
 * and on, in the order given, when even that is alike. A name no other class has is not in the
 * result, so its keys in the store never change.
 *
 * @param items - every class that may be limited, in a fixed order (the same on every instance)
 * @param nameOf - its name (a class's `name`; a minified build may give many the same)
 * @param whereOf - what tells apart those of one name
 * @returns the names of the classes that share theirs with another
 * @example
 * ```ts
 * scopeNames([v1, v2], (c) => c.name, (c) => pathOf(c)); // Map { v1 => 'UsersController(v1/users)', … }
 * ```
 */
export function scopeNames<T>(
  items: readonly T[],
  nameOf: (item: T) => string,
  whereOf: (item: T) => string,
): Map<T, string> {
  const byName = new Map<string, T[]>();
  for (const item of items) {
    const same = byName.get(nameOf(item));
    if (same === undefined) byName.set(nameOf(item), [item]);
    else same.push(item);
  }
  const names = new Map<T, string>();
  for (const [name, same] of byName) {
    if (same.length < 2) continue;
    const taken = new Set<string>();
    for (const item of same) {
      const where = `${name}(${whereOf(item)})`;
      let named = where;
      for (let n = 2; taken.has(named); n++) named = `${where}#${n}`;
      taken.add(named);
      names.set(item, named);
    }
  }
  return names;
}
