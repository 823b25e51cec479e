import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A reader of a fresh clone follows the links of the README and of docs/: every relative one must
 * lead to a file or folder of the clone, and a link to a heading of a Markdown page (`page.md#anchor`,
 * `#anchor`) to a heading that page has, as GitHub names its anchors.
 */
const PAGES = [
  'README.md',
  ...readdirSync('docs', { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => join('docs', file)),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, `-1`, `-2` for repeats. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-');
    let anchor = base;
    for (let repeat = 1; anchors.has(anchor); repeat += 1) anchor = `${base}-${repeat}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** Every relative link of `page` (Markdown text) that leads nowhere, as `page -> target`. */
function brokenLinks(page: string, markdown: string, read = (path: string) => readFileSync(path, 'utf8'), exists: (path: string) => boolean = existsSync): string[] {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  const targets = [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map(([, target]) => target!).filter((target) => !/^[a-z][a-z+.-]*:/i.test(target));
  return targets
    .filter((target) => {
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const path = file === '' ? page : normalize(join(dirname(page), decodeURI(file)));
      if (!exists(path)) return true;
      return anchor !== undefined && path.endsWith('.md') && !anchorsOf(read(path)).has(anchor);
    })
    .map((target) => `${page} -> ${target}`);
}

describe('links of the README and docs/', () => {
  it('reads the README and the docs pages', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'docs/routes.md', 'docs/contributing.md', 'docs/operator.md', 'docs/operations.md', 'docs/decisions.md']));
  });

  it.each(PAGES)('%s: every relative link resolves to a file of the repository and an existing heading', (page) => {
    const markdown = readFileSync(page, 'utf8');
    expect(brokenLinks(page, markdown)).toEqual([]);
  });

  it('every docs page is reachable from the README, directly or through another page', () => {
    const reached = new Set(['README.md']);
    for (let grew = true; grew; ) {
      grew = false;
      for (const page of [...reached]) {
        for (const [, target] of readFileSync(page, 'utf8').matchAll(/\]\(([^)#\s]+\.md)(#[^)]*)?\)/g)) {
          const path = normalize(join(dirname(page), target!));
          if (PAGES.includes(path) && !reached.has(path)) {
            reached.add(path);
            grew = true;
          }
        }
      }
    }
    expect(PAGES.filter((page) => !reached.has(page))).toEqual([]);
  });

  /** `brokenLinks` of `docs/a.md` over a few pages held in memory. */
  const brokenAmong = (files: Record<string, string>, markdown: string) =>
    brokenLinks(
      'docs/a.md',
      markdown,
      (path) => files[path]!,
      (path) => path in files,
    );

  // The check must be able to fail: a missing file, a missing heading on another page or on this one.
  it.each([
    ['a missing file', '[x](nowhere.md)', 'docs/a.md -> nowhere.md'],
    ['a missing heading of another page', '[x](b.md#no-such-heading)', 'docs/a.md -> b.md#no-such-heading'],
    ['a missing heading of the same page', '# Title\n[x](#no-such-heading)', 'docs/a.md -> #no-such-heading'],
  ])('finds %s', (_, markdown, expected) => {
    expect(brokenAmong({ 'docs/a.md': markdown, 'docs/b.md': '# B\n## The handler stack\n' }, markdown)).toEqual([expected]);
  });

  it('accepts headings as GitHub names them', () => {
    const files: Record<string, string> = { 'docs/b.md': '# B\n## The handler stack\n### `POST /v1/x`: why (again)\n## Notes\n## Notes\n' };
    const markdown = '[a](b.md#the-handler-stack) [b](b.md#post-v1x-why-again) [c](b.md#notes-1)';
    expect(brokenAmong(files, markdown)).toEqual([]);
  });
});

describe('the walkthroughs of docs/contributing.md', () => {
  const page = readFileSync('docs/contributing.md', 'utf8');
  const walkthroughs = page.slice(page.indexOf('## Three requests'), page.indexOf('## Data model'));
  const code = ['lib', 'functions']
    .flatMap((folder) =>
      readdirSync(folder, { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => readFileSync(join(folder, file), 'utf8')),
    )
    .join('\n');
  /** The camelCase names a walkthrough puts in code spans (`readCart`, `eventsOf(old image, new image)`): functions of lib/ and functions/. */
  const named = [...new Set([...walkthroughs.matchAll(/`([a-z]+[A-Z][A-Za-z]*)(\([^`]*\))?`/g)].map(([, name]) => name!))];

  it('name functions the code still defines', () => {
    expect(named).toEqual(expect.arrayContaining(['placeOrder', 'claimCommands', 'markApproved', 'eventsOf']));
    const defined = (name: string) => new RegExp(`(function\\*?|const|let) ${name}\\b`).test(code);
    expect(named.filter((name) => !defined(name))).toEqual([]);
  });
});
