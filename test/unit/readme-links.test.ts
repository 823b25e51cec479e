import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** A reader of a fresh clone follows the README's links: every relative one must lead to a file or folder of the clone. */
describe('README.md links', () => {
  it('resolve to files of the repository', () => {
    const readme = readFileSync('README.md', 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map(([, target]) => target!).filter((target) => !/^[a-z][a-z+.-]*:|^#/i.test(target));
    expect(targets.length).toBeGreaterThan(0);
    const missing = targets.filter((target) => !existsSync(resolve(dirname('README.md'), decodeURI(target.split('#')[0]!))));
    expect(missing).toEqual([]);
  });
});
