import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, version as esbuildVersion, type BuildOptions } from 'esbuild';
import { functionNames } from '#lib/routes/index.ts';

/**
 * Bundles the handlers of the route table's family (routes, jobs, consumers) in ONE esbuild call (about 6 s for 47 handlers here,
 * where a NodejsFunction spends ~0.7 s on each) into `<outdir>/<name>/index.mjs`, the layout the
 * area stacks hand to each Lambda as its code asset.
 */
const projectRoot = fileURLToPath(new URL('..', import.meta.url));
export const defaultFunctionsDir = resolve(projectRoot, '.build/functions');

/** Node version of the Lambda runtime the stack deploys (lambda.Runtime.NODEJS_24_X). */
export const LAMBDA_NODE_TARGET = 'node24';

/** ESM output still meets CommonJS dependencies that call `require`; give them one. */
const requireShim = "import{createRequire}from'module';const require=createRequire(import.meta.url);";

export interface BundleSize {
  name: string;
  bytes: number;
}

/** The esbuild options of every build, for the handlers `names`. */
const buildOptions = (outdir: string, names: readonly string[]) =>
  ({
    entryPoints: Object.fromEntries(names.map((name) => [`${name}/index`, resolve(projectRoot, 'functions', `${name}.ts`)])),
    outdir,
    absWorkingDir: projectRoot,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: LAMBDA_NODE_TARGET,
    outExtension: { '.js': '.mjs' },
    // Prefer the ESM builds of the AWS SDK and middy: they tree-shake far better than `main`.
    mainFields: ['module', 'main'],
    // Lambda's credentials are in the environment: the SDK's default chain shrinks to that one link.
    alias: { '@aws-sdk/credential-provider-node': './infra/lambda-credentials.ts' },
    banner: { js: requireShim },
    minify: true,
    // Stack traces need only the mappings; the sources would double the asset for nothing.
    sourcemap: true,
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
  }) satisfies BuildOptions;

export async function buildFunctions(outdir = defaultFunctionsDir, names: readonly string[] = functionNames()): Promise<BundleSize[]> {
  // A function removed from the route table must not leave a stale bundle behind.
  rmSync(outdir, { recursive: true, force: true });
  return bundle(outdir, names, {});
}

/**
 * What `cdk synth` and `cdk deploy` call: rebuilds only the handlers one of whose files (input or
 * output) changed since the last build (size and mtime, as make does), and those new to the family;
 * removes the bundles of handlers no longer in it; everything when the options, the esbuild version,
 * package.json or tsconfig.json changed. Each handler is its own bundle (no code splitting), so a
 * bundle built alone is the bundle a full build writes. An edit to one handler rebuilds that one
 * (about 0.2 s of esbuild instead of 6 s for all), an edit to lib/db/order.ts the handlers that
 * import it; two app runs in a row (synth, then deploy) bundle once. `names`: the handlers to keep
 * bundled (the family by default; test/infra/build.test.ts passes a few).
 */
export async function buildChangedFunctions(outdir = defaultFunctionsDir, names: readonly string[] = functionNames()): Promise<BundleSize[]> {
  const stamp = lastStamp(outdir);
  if (!stamp) return buildFunctions(outdir, names);
  const changed = new Set(Object.entries(stamp.files).flatMap(([file, recorded]) => (fileStamp(file) === recorded ? [] : [file])));
  const stale = names.filter((name) => {
    const built = stamp.functions[name];
    return !built || built.some((file) => changed.has(file));
  });
  const gone = Object.keys(stamp.functions).filter((name) => !names.includes(name));
  if (stale.length === 0 && gone.length === 0) return sizesOf(stamp);
  for (const name of [...stale, ...gone]) rmSync(join(outdir, name), { recursive: true, force: true });
  const kept = Object.fromEntries(Object.entries(stamp.functions).filter(([name]) => names.includes(name) && !stale.includes(name)));
  return bundle(outdir, stale, kept, stamp);
}

const STAMP_FILE = 'build-stamp.json';

interface BuildStamp {
  /** The build options (without the entries), the esbuild version, package.json and tsconfig.json. */
  key: string;
  /** Every input and output of the bundles, relative to the project root: `size:mtime`. */
  files: Record<string, string>;
  /** Each handler's inputs and outputs (keys of `files`), and its bundle's size. */
  functions: Record<string, string[]>;
  sizes: Record<string, number>;
}

/** Bundles `names` (all at once, one esbuild call) beside the bundles `kept` of an earlier build, and writes the stamp of them all. */
async function bundle(outdir: string, names: readonly string[], kept: BuildStamp['functions'], previous?: BuildStamp): Promise<BundleSize[]> {
  const stamp: BuildStamp = { key: stampKey(outdir), files: {}, functions: { ...kept }, sizes: {} };
  for (const name of Object.keys(kept)) stamp.sizes[name] = previous!.sizes[name]!;
  if (names.length > 0) {
    const result = await build(buildOptions(outdir, names));
    for (const [file, output] of Object.entries(result.metafile.outputs)) {
      if (!file.endsWith('/index.mjs')) continue;
      const name = relative(outdir, resolve(projectRoot, file)).split('/')[0]!;
      stamp.functions[name] = [...Object.keys(output.inputs), file, `${file}.map`];
      stamp.sizes[name] = output.bytes;
    }
  }
  for (const file of new Set(Object.values(stamp.functions).flat())) stamp.files[file] = fileStamp(file);
  writeFileSync(join(outdir, STAMP_FILE), JSON.stringify(stamp));
  return sizesOf(stamp);
}

const sizesOf = (stamp: BuildStamp): BundleSize[] =>
  Object.entries(stamp.sizes)
    .map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => a.name.localeCompare(b.name));

/** What, when it changes, makes every bundle stale: the options but the entries, esbuild, and the files esbuild reads for every entry. */
const stampKey = (outdir: string) => {
  const { entryPoints: _, ...options } = buildOptions(outdir, []);
  const configs = ['package.json', 'tsconfig.json'].map((file) => readFileSync(resolve(projectRoot, file), 'utf8'));
  return JSON.stringify({ esbuild: esbuildVersion, options, configs });
};

function fileStamp(file: string): string {
  const stats = statSync(resolve(projectRoot, file), { throwIfNoEntry: false });
  return stats ? `${stats.size}:${stats.mtimeMs}` : 'absent';
}

/** The stamp of the last build into `outdir`, if it was made with these options (else every bundle is stale). */
function lastStamp(outdir: string): BuildStamp | undefined {
  const stampPath = join(outdir, STAMP_FILE);
  if (!existsSync(stampPath)) return undefined;
  const stamp = JSON.parse(readFileSync(stampPath, 'utf8')) as Partial<BuildStamp>;
  return stamp.key === stampKey(outdir) && stamp.functions ? (stamp as BuildStamp) : undefined;
}

export function formatSizeTable(sizes: BundleSize[]): string {
  const width = Math.max('function'.length, ...sizes.map((size) => size.name.length));
  const lines = sizes.map((size) => `${size.name.padEnd(width)}  ${(size.bytes / 1024).toFixed(1).padStart(8)}`);
  const total = sizes.reduce((sum, size) => sum + size.bytes, 0);
  return [`${'function'.padEnd(width)}  ${'KB'.padStart(8)}`, ...lines, `${'total'.padEnd(width)}  ${(total / 1024).toFixed(1).padStart(8)}`].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const sizes = await buildFunctions();
  console.log(formatSizeTable(sizes));
  console.log(`${sizes.length} functions bundled into ${relative(process.cwd(), defaultFunctionsDir)} in ${Math.round(performance.now() - started)} ms`);
}
