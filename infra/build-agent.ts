import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * `npm run build:agent`: the delivery agent as one file, dist/agent.mjs, that runs with Node 20+
 * and nothing beside it (rcon-client bundled in). Its version is the package's, plus the commit
 * it was built from when there is one.
 */
const projectRoot = fileURLToPath(new URL('..', import.meta.url));
export const defaultAgentFile = resolve(projectRoot, 'dist/agent.mjs');

function agentVersion(): string {
  const { version } = JSON.parse(readFileSync(resolve(projectRoot, 'package.json'), 'utf8')) as { version: string };
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    return `${version}+${commit}`;
  } catch {
    return version;
  }
}

/** The bundled library's notice, which its MIT license asks every copy to carry. */
function bundledNotice(): string {
  const { version, license, author } = JSON.parse(readFileSync(resolve(projectRoot, 'node_modules/rcon-client/package.json'), 'utf8')) as {
    version: string;
    license: string;
    author: string;
  };
  return `/*! store-api delivery agent. Bundles rcon-client ${version} (${license} License, Copyright (c) ${author.replace(/\s*<.*>/, '')}) */`;
}

/** Builds the file; answers it, its size and version, and the modules it leaves to Node (`externals`). */
export async function buildAgent(outfile = defaultAgentFile): Promise<{ outfile: string; bytes: number; version: string; externals: string[] }> {
  const version = agentVersion();
  const result = await build({
    entryPoints: [resolve(projectRoot, 'agent/main.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // rcon-client is CommonJS: its `require('net')` needs a require in an ES module.
    banner: { js: `#!/usr/bin/env node\n${bundledNotice()}\nimport{createRequire}from'module';const require=createRequire(import.meta.url);` },
    define: { AGENT_VERSION: JSON.stringify(version) },
    minify: true,
    legalComments: 'eof',
    logLevel: 'warning',
    metafile: true,
  });
  const externals = Object.values(result.metafile.outputs).flatMap((output) => output.imports.filter((entry) => entry.external).map((entry) => entry.path));
  return { outfile, bytes: statSync(outfile).size, version, externals: [...new Set(externals)].sort() };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { outfile, bytes, version } = await buildAgent(process.argv[2] ? resolve(process.argv[2]) : undefined);
  console.log(`${outfile}: ${(bytes / 1024).toFixed(1)} KB, version ${version}`);
}
