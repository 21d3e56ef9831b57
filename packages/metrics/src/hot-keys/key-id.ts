/** Keys up to this many characters are counted as they are. */
export const MAX_KEY_CHARS = 200;
/** How much of a longer key is kept to show it. */
const SHOWN_CHARS = 160;

/**
 * The text a key is counted and shown under. A key of up to 200 characters is itself (no
 * allocation); a longer one (a 15 kB header, a key function's 1 MB string) becomes its first
 * 160 characters, its length and a hash of the whole text, so a counter never holds more than
 * about 200 characters however long the keys, and two long keys are told apart by their hash.
 */
export function keyId(key: string): string {
  if (key.length <= MAX_KEY_CHARS) return key;
  return `${key.slice(0, SHOWN_CHARS)}… (${key.length} chars, #${fnv1a(key).toString(16).padStart(8, '0')})`;
}

/** FNV-1a, 32 bits, over UTF-16 code units: cheap, and enough to tell a handful of long keys apart. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
