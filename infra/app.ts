import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildFunctions, defaultFunctionsDir } from '#infra/build.ts';
import { StoreApiStack } from '#infra/stack.ts';

/**
 * `npx cdk synth|deploy [-c stage=prod] [-c mailFrom=no-reply@shop.example]`: bundles every
 * handler (one esbuild call), then synthesizes `StoreApi-<stage>`, checked by cdk-nag.
 */
const app = new App();
const stage = String(app.node.tryGetContext('stage') ?? 'dev');
if (!/^[a-z][a-z0-9-]{0,30}$/.test(stage)) throw new Error(`stage must be lowercase letters, digits and dashes: ${stage}`);
// Context values given with -c are strings.
const mailFrom = app.node.tryGetContext('mailFrom') as string | undefined;
if (mailFrom !== undefined && !/^[^@\s]+@[^@\s]+$/.test(mailFrom)) throw new Error(`mailFrom must be an email address: ${mailFrom}`);

await buildFunctions(defaultFunctionsDir);
new StoreApiStack(app, `StoreApi-${stage}`, {
  stage,
  functionsDir: defaultFunctionsDir,
  mailFrom,
  description: `store-api (${stage}): HTTP APIs, Lambda functions, DynamoDB table, images bucket and CDN`,
});
// cdk-nag 3 is a policy validation plugin: it runs during synthesis and fails it on any finding.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
