/**
 * Lua declaring local `target`, the text of the whole number `n` (a local): `format('%d', n)`,
 * or with `memoized` the text last made through the memo `<memo>_ms`, `<memo>_text` (locals the
 * script declares before, as `slidingLogWriteLua` and the permits' batch functions do) when `n`
 * is the same number, else made and kept there, then `remade` run. A script deciding many
 * requests at one "now" sends the same texts again and again: a format costs Redis about 1.5 k
 * instructions, a comparison a few dozen.
 */
export function intTextLua(target: string, n: string, memo: string, memoized: boolean, remade = ''): string {
  if (!memoized) return `local ${target} = format('%d', ${n})`;
  return `local ${target} = ${memo}_text
    if ${n} ~= ${memo}_ms then
      ${target} = format('%d', ${n})
      ${memo}_ms, ${memo}_text = ${n}, ${target}
      ${remade}
    end`;
}
