import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildChangedFunctions, defaultFunctionsDir } from '#infra/build.ts';
import { defaultDocsDir, writeApiReference } from '#infra/docs.ts';
import { addStoreApiStacks } from '#infra/store-api.ts';
import { stageFromContext } from '#infra/stage-context.ts';

/**
 * `npx cdk synth|deploy --all [-c stage=prod -c mailFrom=no-reply@shop.example] [-c ...]` (every
 * context value and its default: infra/stage-context.ts): bundles every
 * handler (one esbuild call, skipped when nothing changed since the last), writes the API reference
 * page (infra/docs.ts), then synthesizes the
 * stacks of the stage (infra/store-api.ts), checked by cdk-nag. CDK's built-in template linter
 * is off: it only warns, and costs more than the rest of the synthesis (about 6 s of CPU for ~480
 * resources); test/infra runs it on every stack and fails on any finding.
 */
const app = new App({ builtinCloudFormationValidation: false });
// Read (and refused, if wrong) before the build: a bad value fails in a second.
const stage = stageFromContext(app);

await buildChangedFunctions(defaultFunctionsDir);
// The API reference page from this route table (a few milliseconds, no network): shipped as static files.
writeApiReference(defaultDocsDir);
addStoreApiStacks(app, { ...stage, functionsDir: defaultFunctionsDir, docsDir: defaultDocsDir });
// cdk-nag 3 is a policy validation plugin: it runs during synthesis and fails it on any finding.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
