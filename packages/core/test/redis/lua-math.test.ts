import type { default as Redis } from 'ioredis';
import { ceilLua, floorLua, maxLua, minLua } from '../../src/stores/redis/scripts/lua-math';
import { useRedisServer } from '../harness/redis-fixtures';

/**
 * The steps round and bound by arithmetic (lua-math.ts) where the TypeScript reference calls
 * Math.floor, Math.ceil, Math.max and Math.min: in Redis's own Lua, each expression must give
 * exactly what `math.*` gives, for the quotients and fractions the steps compute and at the
 * edges of a finite double (no step rounds an infinity: see lua-math.ts). The values run in Redis, in one script; each mismatch comes back whole.
 */
const redis = useRedisServer();
let client: Redis;

beforeAll(() => {
  client = redis.client();
});

const EDGES = [
  0,
  -0,
  1,
  -1,
  0.5,
  -0.5,
  1e-300,
  -1e-300,
  2 ** 52,
  2 ** 52 + 1,
  2 ** 53,
  -(2 ** 53),
  2 ** 52 - 0.5,
  -(2 ** 52 - 0.5),
  1 - 2 ** -53,
  -(1 - 2 ** -53),
  1 + 2 ** -52,
  1e300,
  -1e300,
];

type Expressions = { floor: typeof floorLua; ceil: typeof ceilLua; max: typeof maxLua; min: typeof minLua };
const LUA_MATH: Expressions = { floor: floorLua, ceil: ceilLua, max: maxLua, min: minLua };

/** Mismatches of each expression with its `math` function over `values` (sent as 17-digit text). */
async function mismatches(values: readonly number[], lua: Expressions = LUA_MATH): Promise<string[]> {
  const script = `
local floor, ceil, max, min = math.floor, math.ceil, math.max, math.min
local out = {}
for i = 1, #ARGV do
  local x = tonumber(ARGV[i])
  local y = tonumber(ARGV[(i % #ARGV) + 1])
  local pairs = {
    { 'floor', ${lua.floor('x')}, floor(x) },
    { 'ceil', ${lua.ceil('x')}, ceil(x) },
    { 'max', ${lua.max('x', 'y')}, max(x, y) },
    { 'min', ${lua.min('x', 'y')}, min(x, y) },
    { 'max0', ${lua.max('0', 'x')}, max(0, x) },
  }
  for _, p in ipairs(pairs) do
    if p[2] ~= p[3] then out[#out + 1] = string.format('%s(%.17g, %.17g): %.17g, not %.17g', p[1], x, y, p[2], p[3]) end
  end
end
return out`;
  const text = values.map((v) => (Number.isFinite(v) ? v.toPrecision(17) : v > 0 ? 'inf' : '-inf'));
  return (await client.eval(script, 0, ...text)) as string[];
}

test('the edges of a double: the same as math.*', async () => {
  expect(await mismatches(EDGES)).toEqual([]);
});

test("the steps' quotients and fractions (seeded): the same as math.*", async () => {
  let seed = 42;
  const random = (): number => {
    // xorshift32: the same values on every run.
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  for (let round = 0; round < 20; round++) {
    const values: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const a = Math.floor(random() * 2 ** 52) - Math.floor(random() * 2 ** 40);
      values.push(
        a / (Math.floor(random() * 2 ** 30) + 1),
        a / 1000,
        (random() - 0.5) * 10 ** (random() * 40 - 20),
      );
    }
    expect(await mismatches(values)).toEqual([]);
  }
});

test('the comparison can fail: a floor that rounds half up is caught', async () => {
  const wrong = await mismatches([2.7, -0.5, 3], {
    ...LUA_MATH,
    floor: (x) => `((${x}) + 0.5 - ((${x}) + 0.5) % 1)`,
  });
  expect(wrong).toEqual([expect.stringMatching(/^floor\(2\.7/), expect.stringMatching(/^floor\(-0\.5/)]);
});
