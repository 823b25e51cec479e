import { Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { JobSpec } from '#lib/routes/jobs.ts';
import { bundleDirOf, EndpointFunction } from '#infra/constructs/endpoint-function.ts';
import { FunctionGroupAlarms } from '#infra/constructs/function-group-alarms.ts';
import { toPascalCase } from '#infra/stacks/area-stack.ts';
import type { DataExports } from '#infra/stacks/data-stack.ts';
import { removalPolicyOf, type StageStackProps } from '#infra/stacks/stage.ts';
import { tableAccessStatement } from '#infra/stacks/table-grant.ts';

export interface JobsStackProps extends StageStackProps {
  /** The job table (lib/routes/jobs.ts), keyed by function name. */
  jobs: Readonly<Record<string, JobSpec>>;
  /** Output of infra/build.ts: one `<function name>/index.mjs` per route and per job. */
  functionsDir: string;
  data: DataExports;
  /** The stage's alarm topic (exported by the HTTP stack). */
  alarmTopicArn: string;
}

const opensSecrets = (job: JobSpec) => (job.uses ?? []).includes('provider-secrets-open');

/** The jobs' group in the alarms. */
export const JOBS_GROUP = 'jobs';

/**
 * The scheduled jobs of lib/routes/jobs.ts: a Lambda each (the same defaults as the endpoints),
 * run by an EventBridge rule on the job's schedule, with the table access its entry states.
 * The local stack runs the same functions on a timer (infra/local/jobs.ts). Their errors and
 * throttles alarm on the stage's topic like an area's: a failed run is retried only by the next
 * one, so a job that fails every time would otherwise go unseen.
 */
export class JobsStack extends Stack {
  readonly functions = new Map<string, EndpointFunction>();

  constructor(scope: Construct, id: string, props: JobsStackProps) {
    super(scope, id, props);
    for (const [name, job] of Object.entries(props.jobs)) {
      const codeDir = bundleDirOf(props.functionsDir, name);
      const jobFunction = new EndpointFunction(this, toPascalCase(name), {
        codeDir,
        description: job.summary.slice(0, 256),
        logRemovalPolicy: removalPolicyOf(props.stage),
        environment: {
          TABLE_NAME: props.data.tableName,
          IMAGES_BASE_URL: props.data.imagesBaseUrl,
          ...(opensSecrets(job) && { PAYMENT_SECRETS_KEY_ID: props.data.paymentSecretsKeyArn }),
        },
      });
      const tableAccess = tableAccessStatement(job.access, props.data.tableArn);
      if (tableAccess) jobFunction.role.addToPrincipalPolicy(tableAccess);
      // Decrypt only: a job opens the stores' provider secrets to call providers, never seals them.
      if (opensSecrets(job)) jobFunction.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['kms:Decrypt'], resources: [props.data.paymentSecretsKeyArn] }));
      new events.Rule(jobFunction, 'Schedule', {
        description: `${name}: ${job.schedule}`,
        schedule: events.Schedule.expression(job.schedule),
        // A run that fails is simply the next run's work: the job reads what has come due since its last success.
        targets: [new targets.LambdaFunction(jobFunction.function, { retryAttempts: 0 })],
      });
      this.functions.set(name, jobFunction);
    }
    new FunctionGroupAlarms(this, 'Alarms', {
      group: JOBS_GROUP,
      functions: [...this.functions.values()].map((job) => job.function),
      topic: sns.Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn),
    });
  }
}
