import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, version as esbuildVersion, type BuildOptions } from 'esbuild';
import { functionNames } from '#lib/routes/index.ts';

/**
 * Bundles every handler of the route table's family (routes, jobs, consumers) in ONE esbuild call (about 2 s for 47 handlers here,
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

const buildOptions = (outdir: string) =>
  ({
    entryPoints: Object.fromEntries(functionNames().map((name) => [`${name}/index`, resolve(projectRoot, 'functions', `${name}.ts`)])),
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

export async function buildFunctions(outdir = defaultFunctionsDir): Promise<BundleSize[]> {
  // A function removed from the route table must not leave a stale bundle behind.
  rmSync(outdir, { recursive: true, force: true });
  const options = buildOptions(outdir);
  const result = await build(options);
  const sizes = Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith('/index.mjs'))
    .map(([file, output]) => ({ name: relative(outdir, resolve(projectRoot, file)).split('/')[0]!, bytes: output.bytes }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const files = [...Object.keys(result.metafile.inputs), ...Object.keys(result.metafile.outputs)];
  const stamp: BuildStamp = { key: stampKey(options), files: Object.fromEntries(files.map((file) => [file, fileStamp(file)])), sizes };
  writeFileSync(join(outdir, STAMP_FILE), JSON.stringify(stamp));
  return sizes;
}

/**
 * What `cdk synth` and `cdk deploy` call: the bundles of the last build when no file it read or
 * wrote has changed since (size and mtime, as make does) and the options and entries are the same;
 * a full build otherwise. Two app runs in a row (synth, then deploy) bundle once.
 */
export async function buildChangedFunctions(outdir = defaultFunctionsDir): Promise<BundleSize[]> {
  return lastBuildIfCurrent(outdir) ?? buildFunctions(outdir);
}

const STAMP_FILE = 'build-stamp.json';

interface BuildStamp {
  /** The build options (entries included) and the esbuild version. */
  key: string;
  /** Every input and output of the build, relative to the project root: `size:mtime`. */
  files: Record<string, string>;
  sizes: BundleSize[];
}

const stampKey = (options: BuildOptions) => JSON.stringify({ esbuild: esbuildVersion, options });

function fileStamp(file: string): string {
  const stats = statSync(resolve(projectRoot, file), { throwIfNoEntry: false });
  return stats ? `${stats.size}:${stats.mtimeMs}` : 'absent';
}

function lastBuildIfCurrent(outdir: string): BundleSize[] | undefined {
  const stampPath = join(outdir, STAMP_FILE);
  if (!existsSync(stampPath)) return undefined;
  const stamp = JSON.parse(readFileSync(stampPath, 'utf8')) as BuildStamp;
  if (stamp.key !== stampKey(buildOptions(outdir))) return undefined;
  return Object.entries(stamp.files).every(([file, recorded]) => fileStamp(file) === recorded) ? stamp.sizes : undefined;
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
