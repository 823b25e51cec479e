import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { RouteSpec } from '#lib/http/route.ts';
import { consumerEntries } from '#lib/routes/consumers.ts';
import { jobEntries } from '#lib/routes/jobs.ts';
import { addStoreApiStacks, type StoreApiProps } from '#infra/store-api.ts';

export type Areas = Record<string, Record<string, RouteSpec>>;
export type Resource = { Type: string; Properties: Record<string, any> };

/**
 * A temp dir with a bundle per function name that only answers 200. The stacks need each
 * `<name>/index.mjs` to exist, not its code: no esbuild run, as CDK assertion tests usually skip
 * bundling. `npx cdk synth` builds the real bundles.
 */
export function stubBundles(names: Iterable<string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'store-api-bundles-'));
  // The scheduled jobs and the consumers are deployed with every app: their bundles always exist.
  for (const name of new Set([...names, ...[...jobEntries(), ...consumerEntries()].map(([name]) => name)])) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'index.mjs'), 'export const handler = async () => ({ statusCode: 200 });\n');
  }
  return dir;
}

/** A temp dir standing for `.build/docs`: the docs stack needs a folder to ship, not Swagger UI itself. */
let stubDocsDir: string | undefined;
export function stubDocs(): string {
  stubDocsDir ??= mkdtempSync(join(tmpdir(), 'store-api-docs-'));
  writeFileSync(join(stubDocsDir, 'index.html'), '<!doctype html><title>API reference</title>\n');
  return stubDocsDir;
}

/** Without CDK's built-in template linter (seconds to start, and not what most tests check); one test runs it. */
export function synthesize(props: Omit<StoreApiProps, 'stage' | 'docsDir'> & { docsDir?: string }, app = new App({ builtinCloudFormationValidation: false })) {
  const stacks = addStoreApiStacks(app, { stage: 'test', docsDir: stubDocs(), ...props });
  const all: Stack[] = [stacks.data, stacks.http, stacks.apiStage, ...stacks.areas.values(), stacks.jobs, stacks.webhooks, stacks.docs];
  return { app, stacks, all };
}

export const resourcesOf = (template: Template, type?: string) => (type ? template.findResources(type) : (template.toJSON().Resources ?? {})) as Record<string, Resource>;

export const resourceCountOf = (stack: Stack) => Object.keys(resourcesOf(Template.fromStack(stack))).length;
