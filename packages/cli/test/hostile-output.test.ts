import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { htmlReport } from '../src/charts/html-report';
import { policySvgFiles } from '../src/charts/write-charts';
import { EXIT } from '../src/main';
import { replay } from '../src/replay/replay';
import { runCli } from './run-cli';

const POLICY = ['--policy', 'gcra 10r/s'];
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-cli-hostile-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** What a terminal acts on: C0 but the newline ending each line, DEL, C1, bidi overrides and isolates. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const TERMINAL_CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

/** Code points XML 1.0 forbids (its `Char` production), lone surrogates included. */
function forbiddenInXml(text: string): string[] {
  const found: string[] = [];
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    const allowed =
      code === 0x9 ||
      code === 0xa ||
      code === 0xd ||
      (code >= 0x20 && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      code >= 0x10000;
    if (!allowed) found.push(`U+${code.toString(16).padStart(4, '0')}`);
  }
  return found;
}

/** A JSON log: each key `times` times in the same second, so every one of them is limited. */
function jsonLog(name: string, keys: readonly string[], times = 30): string {
  const lines: string[] = [];
  for (const key of keys)
    for (let i = 0; i < times; i++) lines.push(JSON.stringify({ time: 1714564800, remote_addr: key }));
  return file(name, `${lines.join('\n')}\n`);
}

const HOSTILE = '\u001b[2J\u001b]0;pwned\u0007 \u009b31m \u007f \u202eevil\u202c \u2066x\u2069 \u0000';
const HOSTILE_SHOWN = '\\x1b[2J\\x1b]0;pwned\\x07 \\x9b31m \\x7f \\u202eevil\\u202c \\u2066x\\u2069 \\x00';

describe('text from the log reaches the terminal with its control characters shown, not acted on', () => {
  test('keys (JSON \\u escapes): escaped one to one; ordinary and non-ASCII text unchanged', async () => {
    const path = jsonLog('keys.jsonl', [HOSTILE, 'Zürich-東京-ünï', 'plain\\backslash']);
    const run = await runCli(['replay', path, ...POLICY], dir);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).not.toMatch(TERMINAL_CONTROLS);
    expect(run.stdout).toContain(`${HOSTILE_SHOWN} (`);
    expect(run.stdout).toContain('Zürich-東京-ünï (');
    expect(run.stdout).toContain('plain\\backslash (');
  });

  test('--json: every control character a \\u escape, parsing back to the exact keys', async () => {
    const path = jsonLog('json-keys.jsonl', [HOSTILE, 'lone \ud800', 'Zürich']);
    const run = await runCli(['replay', path, ...POLICY, '--json'], dir);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).not.toMatch(TERMINAL_CONTROLS);
    const parsed = JSON.parse(run.stdout) as { policies: Array<{ limitedKeys: Array<{ key: string }> }> };
    expect(parsed.policies[0]?.limitedKeys.map(({ key }) => key).sort()).toEqual(
      [HOSTILE, 'lone \ud800', 'Zürich'].sort(),
    );
  });

  test('keys from a combined log, whose \\xHH escapes the reader turns back into bytes', async () => {
    const ua = '\\x1B[2J\\x1B]0;pwned\\x07<b>';
    const line = `1.2.3.4 - - [10/Oct/2000:13:55:00 -0700] "GET / HTTP/1.1" 200 12 "-" "${ua}"`;
    const path = file('evil.log', `${Array(30).fill(line).join('\n')}\n`);
    const run = await runCli(['replay', path, '--key', '$http_user_agent', ...POLICY], dir);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).not.toMatch(TERMINAL_CONTROLS);
    expect(run.stdout).toContain('\\x1b[2J\\x1b]0;pwned\\x07<b> (');
  });

  test('the source name, the lines that could not be read and error messages', async () => {
    const good = JSON.stringify({ time: 1714564800, remote_addr: '192.0.2.1' });
    const name = 'a\u001b[31m\u202eb.jsonl';
    const path = file(name, `${good}\nnot json \u009b2J \u202e\n${good}\n`);
    const run = await runCli(['replay', name, ...POLICY], dir);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).not.toMatch(TERMINAL_CONTROLS);
    expect(run.stdout.split('\n')[0]).toMatch(/^sluice replay: a\\x1b\[31m\\u202eb\.jsonl \(/);
    expect(run.stdout).toContain('  line 2: not JSON: "not json \\x9b2J \\u202e"');
    expect(existsSync(path)).toBe(true);

    const unknown = file('unknown.log', 'what \u009b2J\u202e is this\n');
    const refused = await runCli(['replay', unknown, ...POLICY], dir);
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).not.toMatch(TERMINAL_CONTROLS);
    expect(refused.stderr).toContain('what \\x9b2J\\u202e is this');
  });
});

describe('the SVG charts and the HTML report stay well-formed whatever the keys hold', () => {
  test('no code point XML 1.0 forbids; the keys shown with their control characters escaped', async () => {
    const keys = [
      '\u0000nul\u0001\u001b[2J',
      'lone \ud800 surrogate',
      'non\ufffe\uffffchars',
      '<script>&"\'',
      'Zürich 😀',
    ];
    const path = jsonLog('svg-keys.jsonl', keys);
    const svgDir = join(dir, 'svg');
    const html = join(dir, 'keys.html');
    const run = await runCli(
      ['replay', path, ...POLICY, '--svg', 'svg', '--out', 'keys.html', '--top', '10'],
      dir,
    );
    expect(run.code).toBe(EXIT.ok);
    const svgs = readdirSync(svgDir).map((name) => readFileSync(join(svgDir, name), 'utf8'));
    expect(svgs).toHaveLength(1);
    const svg = svgs[0] as string;
    const page = readFileSync(html, 'utf8');
    for (const text of [svg, page]) {
      expect(forbiddenInXml(text)).toEqual([]);
      expect(text).not.toMatch(TERMINAL_CONTROLS);
      expect(text).not.toContain('<script>');
      expect(text).toContain('\\x00nul\\x01\\x1b[2J');
      expect(text).toContain('lone \\ud800 surrogate');
      expect(text).toContain('non\\ufffe\\uffffchars');
      expect(text).toContain('Zürich 😀');
    }
    // In memory, before UTF-8 (which would turn a lone surrogate into U+FFFD on its own).
    const result = await replay({ input: { kind: 'log', path }, policies: ['gcra 10r/s'] });
    for (const text of [...policySvgFiles(result, 10).values(), htmlReport(result, 10)]) {
      expect(forbiddenInXml(text)).toEqual([]);
      expect(text).toContain('lone \\ud800 surrogate');
    }
  });
});

describe('a bad --out or --svg path: a message naming the option and the path, exit 2', () => {
  let log: string;
  beforeAll(() => {
    const line = '1.2.3.4 - - [10/Oct/2000:13:55:00 -0700] "GET / HTTP/1.1" 200 12 "-" "curl"';
    log = file('base.log', `${Array(30).fill(line).join('\n')}\n`);
    mkdirSync(join(dir, 'adir'));
  });

  test('--out a directory, or in a directory that does not exist: refused before the replay', async () => {
    const isDir = await runCli(['replay', log, ...POLICY, '--out', 'adir'], dir);
    expect(isDir).toEqual({
      code: EXIT.usage,
      stdout: '',
      stderr: `sluice: --out ${join(dir, 'adir')}: cannot write there: it is a directory (EISDIR)\n`,
    });
    const noParent = await runCli(['replay', log, ...POLICY, '--out', 'nope/r.html'], dir);
    expect(noParent).toEqual({
      code: EXIT.usage,
      stdout: '',
      stderr: `sluice: --out ${join(dir, 'nope', 'r.html')}: cannot write there: no such directory ${join(dir, 'nope')} (ENOENT)\n`,
    });
    const parentFile = await runCli(['replay', log, ...POLICY, '--out', 'base.log/r.html'], dir);
    expect(parentFile.code).toBe(EXIT.usage);
    expect(parentFile.stdout).toBe('');
    expect(parentFile.stderr).toContain(`--out ${join(dir, 'base.log', 'r.html')}: cannot write there:`);
  });

  test('--svg an existing file, or under one: refused before the replay', async () => {
    const isFile = await runCli(['replay', log, ...POLICY, '--svg', 'base.log'], dir);
    expect(isFile).toEqual({
      code: EXIT.usage,
      stdout: '',
      stderr: `sluice: --svg ${log}: cannot write charts there: it is not a directory (ENOTDIR)\n`,
    });
    const under = await runCli(['replay', log, ...POLICY, '--svg', 'base.log/charts'], dir);
    expect(under.code).toBe(EXIT.usage);
    expect(under.stdout).toBe('');
    expect(under.stderr).toBe(
      `sluice: --svg ${join(dir, 'base.log', 'charts')}: cannot write charts there: ${log} is not a directory (ENOTDIR)\n`,
    );
  });

  test('a write that fails after the replay (a chart name taken by a directory, /proc/version)', async () => {
    mkdirSync(join(dir, 'taken', 'gcra-10r-s.svg'), { recursive: true });
    const taken = await runCli(['replay', log, ...POLICY, '--svg', 'taken'], dir);
    expect(taken.code).toBe(EXIT.usage);
    expect(taken.stderr).toBe(
      `sluice: --svg ${join(dir, 'taken')}: cannot write ${join(dir, 'taken', 'gcra-10r-s.svg')}: it is a directory (EISDIR)\n`,
    );
    if (existsSync('/proc/version')) {
      const proc = await runCli(['replay', log, ...POLICY, '--out', '/proc/version'], dir);
      expect(proc.code).toBe(EXIT.usage);
      expect(proc.stderr).toMatch(/^sluice: --out \/proc\/version: cannot write there: .+\n$/);
    }
  });

  test('--out or a chart that is the log being replayed is refused: the log is left as it was', async () => {
    const victim = file('victim.log', readFileSync(log, 'utf8'));
    const before = readFileSync(victim, 'utf8');
    const same = await runCli(['replay', 'victim.log', ...POLICY, '--out', 'victim.log'], dir);
    expect(same).toEqual({
      code: EXIT.usage,
      stdout: '',
      stderr: `sluice: --out ${victim}: it is the log being replayed; write the report elsewhere\n`,
    });
    symlinkSync(victim, join(dir, 'victim-link.html'));
    linkSync(victim, join(dir, 'victim-hard.html'));
    for (const out of ['victim-link.html', 'victim-hard.html', `./adir/../victim.log`]) {
      const run = await runCli(['replay', 'victim.log', ...POLICY, '--out', out], dir);
      expect(run.code).toBe(EXIT.usage);
      expect(run.stderr).toContain('it is the log being replayed');
    }
    // A log whose name is the chart's, in the --svg directory.
    mkdirSync(join(dir, 'charts'));
    const chart = join(dir, 'charts', 'gcra-10r-s.svg');
    writeFileSync(chart, before);
    const svg = await runCli(['replay', chart, '--format', 'combined', ...POLICY, '--svg', 'charts'], dir);
    expect(svg.code).toBe(EXIT.usage);
    expect(svg.stderr).toBe(
      `sluice: --svg ${join(dir, 'charts')}: ${chart} is the log being replayed; write the charts elsewhere\n`,
    );
    expect(readFileSync(victim, 'utf8')).toBe(before);
    expect(readFileSync(chart, 'utf8')).toBe(before);
  });
});

describe("the log's name as typed", () => {
  test.each(['we$&ird.log', "x$'y.log", 'a$`b.log', '$$.log'])('%s', async (name) => {
    const line = '1.2.3.4 - - [10/Oct/2000:13:55:00 -0700] "GET / HTTP/1.1" 200 12 "-" "curl"';
    file(name, `${line}\n`);
    const run = await runCli(['replay', name, ...POLICY], dir);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout.split('\n')[0]).toBe(`sluice replay: ${name} (combined, key $remote_addr)`);
  });
});
