/**
 * Rounding and bounds as Lua expressions without a call. A call of `math.floor` (or `ceil`,
 * `max`, `min`) costs Redis about 250 instructions (the upvalue, the C function's frame, its
 * argument checks); the same by arithmetic and comparisons, a few dozen. Each takes Lua
 * expressions and gives the same double as the `math` function, for every finite double (the
 * floor of an infinity is NaN here: no step rounds one, their divisors are never 0 and the leaky
 * bucket's empty level of -infinity is never rounded):
 *
 * - `x - x % 1` is `floor(x)`: Lua 5.1 computes `x % 1` as `x - floor(x)`, which is exact for
 *   |x| ≥ 1 (a multiple of x's last place, below 1), and for |x| < 1 rounds only where the
 *   subtraction that follows rounds back to the same integer (checked on millions of quotients,
 *   fractions and the edges: ±0, ±2^52 ± ½, 1 − 2^−53, ±1e−300, ±1e300).
 * - `ceil(x)` is `-floor(-x)`.
 * - `max(a, b)` is `b > a and b or a`, as `math.max` compares (so NaN as `b` gives `a`).
 *
 * An expression given is evaluated twice: give a local or a pure expression.
 */

/** `math.floor(x)` without a call. */
export function floorLua(x: string): string {
  return `((${x}) - (${x}) % 1)`;
}

/** `math.ceil(x)` without a call. */
export function ceilLua(x: string): string {
  return `(-((-(${x})) - (-(${x})) % 1))`;
}

/** `math.max(a, b)` without a call. */
export function maxLua(a: string, b: string): string {
  return `(${b} > ${a} and ${b} or ${a})`;
}

/** `math.min(a, b)` without a call. */
export function minLua(a: string, b: string): string {
  return `(${b} < ${a} and ${b} or ${a})`;
}
