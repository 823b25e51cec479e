import { rmSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { routeEntries } from '#lib/routes/index.ts';

/**
 * Bundles every handler of the route table in ONE esbuild call (about 2 s for 47 handlers here,
 * where a NodejsFunction spends ~0.7 s on each) into `<outdir>/<name>/index.mjs`, the layout the
 * CDK stack hands to each Lambda as its code asset.
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

export async function buildFunctions(outdir = defaultFunctionsDir): Promise<BundleSize[]> {
  // A function removed from the route table must not leave a stale bundle behind.
  rmSync(outdir, { recursive: true, force: true });
  const entryPoints = Object.fromEntries(routeEntries().map(([name]) => [`${name}/index`, resolve(projectRoot, 'functions', `${name}.ts`)]));
  const result = await build({
    entryPoints,
    outdir,
    absWorkingDir: projectRoot,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: LAMBDA_NODE_TARGET,
    outExtension: { '.js': '.mjs' },
    // Prefer the ESM builds of the AWS SDK and middy: they tree-shake far better than `main`.
    mainFields: ['module', 'main'],
    banner: { js: requireShim },
    minify: true,
    // Stack traces need only the mappings; the sources would double the asset for nothing.
    sourcemap: true,
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
  });
  return Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith('/index.mjs'))
    .map(([file, output]) => ({ name: relative(outdir, resolve(projectRoot, file)).split('/')[0]!, bytes: output.bytes }))
    .sort((a, b) => a.name.localeCompare(b.name));
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
