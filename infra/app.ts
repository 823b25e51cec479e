import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildChangedFunctions, defaultFunctionsDir } from '#infra/build.ts';
import { addStoreApiStacks } from '#infra/store-api.ts';

/**
 * `npx cdk synth|deploy --all [-c stage=prod] [-c mailFrom=no-reply@shop.example]`: bundles every
 * handler (one esbuild call, skipped when nothing changed since the last), then synthesizes the
 * stacks of the stage (infra/store-api.ts), checked by cdk-nag.
 */
// CDK's built-in template linter only warns, and costs more than the rest of the synthesis
// (about 6 s of CPU for ~480 resources); test/infra runs it on every stack and fails on any finding.
const app = new App({ builtinCloudFormationValidation: false });
const stage = String(app.node.tryGetContext('stage') ?? 'dev');
if (!/^[a-z][a-z0-9-]{0,30}$/.test(stage)) throw new Error(`stage must be lowercase letters, digits and dashes: ${stage}`);
// Context values given with -c are strings.
const mailFrom = app.node.tryGetContext('mailFrom') as string | undefined;
if (mailFrom !== undefined && !/^[^@\s]+@[^@\s]+$/.test(mailFrom)) throw new Error(`mailFrom must be an email address: ${mailFrom}`);

await buildChangedFunctions(defaultFunctionsDir);
addStoreApiStacks(app, { stage, functionsDir: defaultFunctionsDir, mailFrom });
// cdk-nag 3 is a policy validation plugin: it runs during synthesis and fails it on any finding.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
