import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchSourceTrees } from '#infra/local/source-watch.ts';
import { waitUntil } from '../support/spawned-stack.ts';

/** The reload's watcher on a real directory tree (inotify on Linux): every way a source changes is heard. */
const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

function watchedTree() {
  const root = mkdtempSync(join(tmpdir(), 'store-api-watch-'));
  mkdirSync(join(root, 'db'));
  writeFileSync(join(root, 'db', 'command.ts'), 'export const a = 1;\n');
  let changes = 0;
  const stop = watchSourceTrees([root], () => (changes += 1));
  cleanups.push(() => {
    stop();
    rmSync(root, { recursive: true, force: true });
  });
  /** Runs `change` and waits until the watcher reports it (then lets its last events in, so that they count for no later step). */
  const heard = async (change: () => void) => {
    const before = changes;
    change();
    const reported = await waitUntil(() => changes > before, 5_000);
    await new Promise((settled) => setTimeout(settled, 200));
    return reported;
  };
  return { root, heard };
}

describe('watchSourceTrees (npm start reload)', () => {
  it('hears a file replaced by a rename, then its in-place edits, again and again', async () => {
    const { root, heard } = watchedTree();
    const file = join(root, 'db', 'command.ts');
    const replace = (text: string) => {
      writeFileSync(`${file}.tmp`, text);
      renameSync(`${file}.tmp`, file);
    };
    expect(await heard(() => writeFileSync(file, 'export const a = 2;\n'))).toBe(true);
    expect(await heard(() => replace('export const a = 3;\n'))).toBe(true);
    expect(await heard(() => writeFileSync(file, 'export const a = 4;\n'))).toBe(true);
    expect(await heard(() => replace('export const a = 5;\n'))).toBe(true);
    expect(await heard(() => writeFileSync(file, 'export const a = 6;\n'))).toBe(true);
  });

  it('hears files in a directory created after it started, and in one replaced by a rename (git checkout)', async () => {
    const { root, heard } = watchedTree();
    expect(await heard(() => mkdirSync(join(root, 'flows')))).toBe(true);
    expect(await heard(() => writeFileSync(join(root, 'flows', 'order.ts'), 'export {};\n'))).toBe(true);
    expect(await heard(() => writeFileSync(join(root, 'flows', 'order.ts'), 'export const b = 1;\n'))).toBe(true);
    const staged = join(root, 'db.new');
    mkdirSync(staged);
    writeFileSync(join(staged, 'command.ts'), 'export const a = 7;\n');
    expect(
      await heard(() => {
        rmSync(join(root, 'db'), { recursive: true });
        renameSync(staged, join(root, 'db'));
      }),
    ).toBe(true);
    expect(await heard(() => writeFileSync(join(root, 'db', 'command.ts'), 'export const a = 8;\n'))).toBe(true);
  });
});
