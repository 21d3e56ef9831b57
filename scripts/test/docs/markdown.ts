import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The repository's root. */
export const ROOT = join(__dirname, '../../..');

/**
 * The documentation users read: the README, every page under docs/, every package's README.
 * Paths relative to the root.
 */
export function docFiles(): string[] {
  const files = ['README.md'];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(ROOT, dir)).sort()) {
      const path = join(dir, name);
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  for (const folder of readdirSync(join(ROOT, 'packages')).sort()) {
    const readme = join('packages', folder, 'README.md');
    try {
      statSync(join(ROOT, readme));
      files.push(readme);
    } catch {
      // a package without a README (the private contract suite)
    }
  }
  return files.map((file) => relative(ROOT, join(ROOT, file)));
}

/** A fenced code block of a Markdown file. */
export interface CodeBlock {
  /** The file, relative to the root. */
  readonly file: string;
  /** The info string's first word (`ts`, `sh`, …). */
  readonly lang: string;
  /** The 1-based line of the block's first line of code. */
  readonly line: number;
  readonly code: string;
  /**
   * What an HTML comment right above the fence asks of the docs test (invisible to readers):
   * `<!-- docs-test: skip <reason> -->`, or `<!-- docs-test: prelude` + code + `-->`, the code
   * the block needs first (imports, a declared `app`), type-checked with it.
   */
  readonly directive?: { readonly kind: 'skip' | 'prelude'; readonly text: string; readonly line: number };
}

/** A heading, a link target or any other line outside code, with its 1-based line. */
export interface TextLine {
  readonly line: number;
  readonly text: string;
}

/** A Markdown file cut into its code blocks and the lines outside them. */
export interface ParsedMarkdown {
  readonly blocks: CodeBlock[];
  readonly prose: TextLine[];
}

const DIRECTIVE = /^<!--\s*docs-test:\s*(\S+)([\s\S]*?)-->\s*$/;

/** @param text - the file's text, when not read from the file */
export function parseMarkdown(file: string, text = readFileSync(join(ROOT, file), 'utf8')): ParsedMarkdown {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  const prose: TextLine[] = [];
  let at = 0;
  while (at < lines.length) {
    const fence = /^(\s{0,3})(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[at] as string);
    if (fence === null) {
      prose.push({ line: at + 1, text: lines[at] as string });
      at += 1;
      continue;
    }
    const [, , marker, lang = ''] = fence;
    const close = new RegExp(`^\\s{0,3}${(marker as string)[0]}{${(marker as string).length},}\\s*$`);
    let end = at + 1;
    while (end < lines.length && !close.test(lines[end] as string)) end += 1;
    blocks.push({
      file,
      lang,
      line: at + 2,
      code: lines.slice(at + 1, end).join('\n'),
      directive: directiveAbove(lines, at, file),
    });
    at = end + 1;
  }
  return { blocks, prose };
}

/** The `docs-test` comment ending on the last non-blank line above line `fence` (0-based), if any. */
function directiveAbove(lines: string[], fence: number, file: string): CodeBlock['directive'] {
  let end = fence - 1;
  while (end >= 0 && (lines[end] as string).trim() === '') end -= 1;
  if (end < 0 || !(lines[end] as string).trimEnd().endsWith('-->')) return undefined;
  let start = end;
  while (start > 0 && !(lines[start] as string).includes('<!--')) start -= 1;
  const match = DIRECTIVE.exec(
    lines
      .slice(start, end + 1)
      .join('\n')
      .trim(),
  );
  if (match === null) return undefined;
  const [, kind, text = ''] = match;
  if (kind !== 'skip' && kind !== 'prelude')
    throw new Error(`${file}:${start + 1}: unknown docs-test directive "${kind}" (skip or prelude)`);
  return { kind, text: text.trim(), line: start + 1 };
}
