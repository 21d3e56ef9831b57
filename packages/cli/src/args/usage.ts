import { ALGORITHMS } from '@sluice/core';
import { PATTERNS } from '../patterns/patterns';

/** `sluice --help`. */
export const USAGE = `sluice replay: what would these rate limits have done to this traffic?

Usage
  sluice replay <log> --policy <policy> [--policy <policy> ...] [options]
  sluice replay --pattern <${PATTERNS.join('|')}> --policy <policy> ... [options]

Each --policy is run through @sluice/core (createLimiter, a MemoryStore, the replay's clock):
  an algorithm (${ALGORITHMS.join(', ')}; default gcra),
  one or more rates (10r/s, 6r/m, 600/1m) and settings burst=N, nodelay, delay=N,
  queue=DURATION, warmup=DURATION, e.g. 'gcra 10r/s burst=20', 'fixed-window 600/1m',
  'leaky-bucket 10r/s burst=20 nodelay'.

Log (a file, a .gz file, or - for standard input)
  --format <auto|combined|json|csv>  default auto: guessed from the first line
  --key <template>          nginx variables, as the adapters' key option: $remote_addr (default),
                            $arg_<name>, $http_<name>, $cookie_<name>, $uri, $server_name,
                            composed: '$http_user_id:$arg_sku_id'
  --key-field <name>        JSON, CSV: the key is this field's value, as it is
  --time-field <name>       JSON, CSV: the time field (default: time, timestamp, @timestamp, ts,
                            time_iso8601, time_local, msec, date)
  --spread <even|none>      requests logged in the same second: spaced evenly across it
                            (default) or all at its start
  --trust-proxy <proxies>   $remote_addr is the client in X-Forwarded-For behind these proxies
                            (nginx "main" format; JSON/CSV http_x_forwarded_for), as the adapters'
                            trustProxy: true, a hop count, or 10.0.0.0/8,loopback (default: none)
  --ipv6-subnet <bits>      IPv6 clients are keyed by this prefix (default 64)

Pattern (generated, the same every time)
  --duration <time>         default 60s
  --rps <n>                 each key's mean requests per second (default 10)
  --keys <n>                distinct keys, client-1 ... (default 1, at most 100000)
  --window <time>           boundary: the window attacked (default: the first policy's)
  --seed <n>                flash-sale: its random arrivals (default 1)
  At most 50 000 000 requests (keys x rps x duration, and boundary's window openings) and,
  for boundary, 1 000 000 windows.

Replay and output
  --max-keys <n>            keys each policy's store holds (default 100000, MemoryStore's)
  --out <file.html>         one self-contained page: the summary and the charts
  --svg <dir>               one chart per policy, <dir>/<policy>.svg
  --top <n>                 hottest keys charted one by one (default 4)
  --json                    the summary as JSON instead of text
  -h, --help                this help
  --version                 the version

Exit code: 0 when requests were replayed (lines that did not parse are counted and listed),
1 when nothing could be replayed, 2 for a usage error (bad option, policy, file or format).

Examples
  sluice replay /var/log/nginx/access.log --key '$remote_addr' \\
    --policy 'gcra 10r/s burst=20' --policy 'fixed-window 600/1m' --out report.html
  sluice replay --pattern boundary --policy 'fixed-window 100/10s' --policy 'sliding-log 100/10s'
`;
