import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Distinct clients in the generated log: the policies' stores hold them all whatever its length. */
export const LOG_CLIENTS = 20_000;

/**
 * Writes an nginx combined-format log of `lines` requests over one hour, the same every time:
 * clients skewed (a few hot ones are limited, most are not), each second's lines sharing one
 * `$time_local`, as a real log does.
 */
export async function writeAccessLog(path: string, lines: number): Promise<void> {
  const out = createWriteStream(path);
  const start = Date.UTC(2024, 4, 1, 12, 0, 0);
  let seed = 42;
  const random = (): number => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed / 2 ** 32;
  };
  let batch: string[] = [];
  let second = -1;
  let stamp = '';
  for (let i = 0; i < lines; i++) {
    const ms = start + Math.floor((i * 3_600_000) / lines);
    if (Math.floor(ms / 1000) !== second) {
      second = Math.floor(ms / 1000);
      const d = new Date(ms);
      const two = (n: number) => String(n).padStart(2, '0');
      stamp = `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
    }
    const client = Math.floor(LOG_CLIENTS * random() ** 3);
    const address = `10.${client >> 16}.${(client >> 8) & 255}.${client & 255}`;
    batch.push(
      `${address} - - [${stamp}] "GET /sku?sku_id=${1000 + (client % 500)} HTTP/1.1" 200 512 "-" "Mozilla/5.0 (X11; Linux x86_64)"`,
    );
    if (batch.length === 10_000) {
      if (!out.write(`${batch.join('\n')}\n`)) await once(out, 'drain');
      batch = [];
    }
  }
  out.end(batch.length > 0 ? `${batch.join('\n')}\n` : '');
  await once(out, 'finish');
}
