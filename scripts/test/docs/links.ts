import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { parseMarkdown, ROOT, type TextLine } from './markdown';

/**
 * The anchor GitHub gives a heading: its text as rendered (code spans and links keep their text),
 * lower-cased, without punctuation, spaces turned to hyphens; a repeated one gets `-1`, `-2`, ….
 */
export function slugOf(heading: string): string {
  return heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file has: its headings' and its explicit `<a id>` / `<a name>`. */
function anchorsOf(file: string, text?: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of parseMarkdown(file, text).prose) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (heading !== null) {
      const slug = slugOf(heading[1] as string);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const [, id] of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id as string);
  }
  return anchors;
}

/** The link targets of a line: `[text](target)`, `![alt](target)`, `[id]: target`, `href`/`src`. */
function targetsOf({ text }: TextLine): string[] {
  const prose = text.replace(/`[^`]*`/g, '');
  const targets = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+["'(][^)]*)?\)/g)].map(
    (m) => m[1] as string,
  );
  const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose);
  if (definition !== null) targets.push(definition[1] as string);
  for (const [, target] of prose.matchAll(/(?:href|src)="([^"]+)"/g)) targets.push(target as string);
  return targets;
}

/**
 * The relative links of a Markdown file that lead nowhere: a missing file, or an anchor its
 * target page does not have. Links with a scheme (`https:`, `mailto:`) are not followed.
 *
 * @param text - the file's text, when not read from the file
 */
export function brokenLinks(file: string, text?: string): string[] {
  const broken: string[] = [];
  const anchors = new Map<string, Set<string>>();
  for (const line of parseMarkdown(file, text).prose) {
    for (const target of targetsOf(line)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      const [path = '', anchor] = target.split('#');
      const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
      const where = `${file}:${line.line} ${target}`;
      if (relative(ROOT, join(ROOT, resolved)).startsWith('..') || !existsSync(join(ROOT, resolved))) {
        broken.push(`${where}: no file ${resolved}`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!resolved.endsWith('.md') || statSync(join(ROOT, resolved)).isDirectory()) {
        broken.push(`${where}: an anchor into ${resolved}, which is not a Markdown page`);
        continue;
      }
      if (!anchors.has(resolved))
        anchors.set(resolved, anchorsOf(resolved, resolved === file ? text : undefined));
      if (!anchors.get(resolved)?.has(decodeURIComponent(anchor)))
        broken.push(`${where}: ${resolved} has no heading #${anchor}`);
    }
  }
  return broken;
}
