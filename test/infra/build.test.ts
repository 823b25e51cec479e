import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildChangedFunctions, buildFunctions } from '#infra/build.ts';

/**
 * `cdk synth` after an edit rebuilds only the bundles the edit touches (infra/build.ts), on three
 * handlers in a folder of the test's own. A change is planted in the build stamp (an input's recorded
 * size and mtime that no longer match), never in a source file, which other tests read meanwhile.
 */
const NAMES = ['note-list', 'tag-create', 'tag-list'];
let outdir: string;
let firstSizes: Awaited<ReturnType<typeof buildFunctions>>;
let firstBundles: Map<string, Buffer>;

const stampFile = () => join(outdir, 'build-stamp.json');
type Stamp = { key: string; files: Record<string, string>; functions: Record<string, string[]> };
const stamp = () => JSON.parse(readFileSync(stampFile(), 'utf8')) as Stamp;
const plant = (change: (stamp: Stamp) => void) => {
  const edited = stamp();
  change(edited);
  writeFileSync(stampFile(), JSON.stringify(edited));
};
const bundleOf = (name: string) => join(outdir, name, 'index.mjs');
const builtAt = () => Object.fromEntries(NAMES.map((name) => [name, statSync(bundleOf(name), { throwIfNoEntry: false })?.mtimeMs]));
/** The handlers whose bundle was written by `run`. */
async function rebuiltBy(run: () => Promise<unknown>): Promise<string[]> {
  const before = builtAt();
  // mtimes in whole milliseconds on some file systems: a rewrite within the same one would go unseen.
  await new Promise((done) => setTimeout(done, 5));
  await run();
  const after = builtAt();
  return NAMES.filter((name) => after[name] !== before[name]);
}
const rebuild = (names = NAMES) => buildChangedFunctions(outdir, names);

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'store-api-build-'));
  firstSizes = await buildFunctions(outdir, NAMES);
  firstBundles = new Map(NAMES.map((name) => [name, readFileSync(bundleOf(name))]));
}, 120_000);
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('bundling after an edit', () => {
  it('rebuilds nothing when no file a bundle read or wrote has changed, and reports the same sizes', async () => {
    let sizes: typeof firstSizes = [];
    expect(await rebuiltBy(async () => (sizes = await rebuild()))).toEqual([]);
    expect(sizes).toEqual(firstSizes);
  });

  it('rebuilds only the handler whose own file changed, into the same bytes a full build writes', async () => {
    plant((edited) => {
      edited.files['functions/tag-create.ts'] = '0:0';
    });
    expect(await rebuiltBy(() => rebuild())).toEqual(['tag-create']);
    expect(readFileSync(bundleOf('tag-create')).equals(firstBundles.get('tag-create')!)).toBe(true);
    expect(await rebuiltBy(() => rebuild())).toEqual([]);
  });

  it('rebuilds every handler that read a shared file that changed', async () => {
    const { functions } = stamp();
    const shared = functions['tag-create']!.find((file) => file.startsWith('lib/') && NAMES.every((name) => functions[name]!.includes(file)));
    expect(shared).toBeDefined();
    const readByTags = functions['tag-create']!.find((file) => file.startsWith('lib/') && functions['tag-list']!.includes(file) && !functions['note-list']!.includes(file));
    expect(readByTags).toBeDefined();
    plant((edited) => {
      edited.files[readByTags!] = '0:0';
    });
    expect(await rebuiltBy(() => rebuild())).toEqual(['tag-create', 'tag-list']);
    plant((edited) => {
      edited.files[shared!] = '0:0';
    });
    expect(await rebuiltBy(() => rebuild())).toEqual(NAMES);
  });

  it('rebuilds a bundle deleted or edited since, builds a handler new to the family, and removes the bundle of one gone from it', async () => {
    rmSync(bundleOf('tag-list'));
    writeFileSync(join(outdir, 'note-list', 'index.mjs.map'), '{}');
    expect(await rebuiltBy(() => rebuild())).toEqual(['note-list', 'tag-list']);
    expect(readFileSync(bundleOf('tag-list')).equals(firstBundles.get('tag-list')!)).toBe(true);

    const sizes = await rebuild([...NAMES, 'tag-get']);
    expect(sizes.map((size) => size.name)).toEqual(['note-list', 'tag-create', 'tag-get', 'tag-list']);
    expect(statSync(bundleOf('tag-get')).size).toBe(sizes.find((size) => size.name === 'tag-get')!.bytes);
    expect((await rebuild()).map((size) => size.name)).toEqual(NAMES);
    expect(statSync(join(outdir, 'tag-get'), { throwIfNoEntry: false })).toBeUndefined();
    expect(Object.keys(stamp().functions).sort()).toEqual(NAMES);
  });

  it('rebuilds everything when the options, esbuild, package.json or tsconfig.json changed (the stamp key)', async () => {
    plant((edited) => {
      edited.key = `${edited.key} `;
    });
    expect(await rebuiltBy(() => rebuild())).toEqual(NAMES);
    expect(await rebuiltBy(() => rebuild())).toEqual([]);
  });
});
