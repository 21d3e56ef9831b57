/**
 * How a string state is stored: its numbers as IEEE doubles, little-endian, one after the other
 * (Redis's `struct` library, `struct.pack('<dd', …)`): 8 bytes a field, read back exactly the
 * double the step computed (Lua 5.1's numbers are doubles, as JavaScript's).
 *
 * Text cost Redis far more, both ways (instructions of redis-server, callgrind): a two-field text
 * read with `match` and two conversions about 4 k instructions (`strtod` alone ~0.6 k a number),
 * written with `format` and concatenations about 3 k; `struct.unpack` reads the same in about
 * 0.9 k and `struct.pack` writes it in about 1.6 k. gcra, 64 keys each holding its state in one
 * batch: 34.5 k → 30.4 k instructions per decision.
 *
 * A value of another length is no state of ours (garbage, a truncated value, the text of an
 * older version of sluice): the readers delete it and read it as none, as any unreadable state.
 */

/** Bytes of one stored field. */
export const FIELD_BYTES = 8;

/** The `struct` format of a state of `fields` numbers. */
function formatOf(fields: number): string {
  return `'<${'d'.repeat(fields)}'`;
}

/** The Lua expression of a state's bytes: `parts` (number expressions) packed as doubles. */
export function packStateLua(parts: readonly string[]): string {
  return `spack(${formatOf(parts.length)}, ${parts.join(', ')})`;
}

/**
 * Lua statements reading the state in the string `value` into the locals `names` (declared here),
 * then running `use` (statements that may read them) when it holds exactly `names.length` fields:
 * a value of another length leaves `use` unrun (the reader then deletes it). The checks of the
 * numbers' ranges are the caller's, in `use`: written as comparisons that NaN fails.
 */
export function unpackStateLua(value: string, names: readonly string[], use: string): string {
  return `if #${value} == ${names.length * FIELD_BYTES} then
  local ${names.join(', ')} = sunpack(${formatOf(names.length)}, ${value})
  ${use}
end`;
}

/**
 * A Lua condition true when every one of `names` holds a whole number (`x % 1` is NaN for NaN and
 * the infinities, so they fail it): the integer states' fields, which only a corrupt value breaks.
 */
export function wholeLua(names: readonly string[]): string {
  return names.map((name) => `${name} % 1 == 0`).join(' and ');
}
