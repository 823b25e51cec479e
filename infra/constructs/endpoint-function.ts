import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ROUTE_TIMEOUT_SECONDS } from '#lib/http/route.ts';

/** Newest Node.js runtime aws-cdk-lib offers; infra/build.ts targets the same version. */
export const FUNCTION_RUNTIME = lambda.Runtime.NODEJS_24_X;
export const FUNCTION_ARCHITECTURE = lambda.Architecture.ARM_64;
export const LOG_RETENTION = logs.RetentionDays.ONE_MONTH;

/**
 * The folder of one function's bundle, as infra/build.ts writes it; a missing bundle is a clear
 * error at synth rather than an asset that deploys nothing.
 */
export function bundleDirOf(functionsDir: string, name: string): string {
  const codeDir = join(functionsDir, name);
  if (!existsSync(join(codeDir, 'index.mjs'))) {
    throw new Error(`No bundle for ${name} in ${functionsDir}: run buildFunctions() (npm run build) first`);
  }
  return codeDir;
}

export interface EndpointFunctionProps {
  /** Folder holding this function's `index.mjs` (+ map), as infra/build.ts writes it. */
  codeDir: string;
  description: string;
  environment: Record<string, string>;
  logRemovalPolicy: RemovalPolicy;
  /** ROUTE_TIMEOUT_SECONDS (10 s) unless said: a request that takes longer is a bug; a background consumer may need more. */
  timeout?: Duration;
}

/**
 * The defaults every endpoint shares, in one place. The role is explicit so that the function
 * may write only to its own log group (AWSLambdaBasicExecutionRole would allow every group
 * in the account); table, bucket and mail grants are added by the stack from the route table.
 */
export class EndpointFunction extends Construct {
  readonly function: lambda.Function;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: EndpointFunctionProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: LOG_RETENTION, removalPolicy: props.logRemovalPolicy });
    this.role = new iam.Role(this, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    this.logGroup.grantWrite(this.role);
    this.function = new lambda.Function(this, 'Function', {
      code: lambda.Code.fromAsset(props.codeDir),
      handler: 'index.handler',
      runtime: FUNCTION_RUNTIME,
      architecture: FUNCTION_ARCHITECTURE,
      // Lambda allots CPU in proportion to memory: 1024 MB keeps the cold start (parsing a
      // ~360 KB bundle) short, at a negligible price for requests that last tens of ms.
      memorySize: 1024,
      // API Gateway gives up after 30 s; a request that takes 10 s is already a bug (the local server gives the same).
      timeout: props.timeout ?? Duration.seconds(ROUTE_TIMEOUT_SECONDS),
      description: props.description,
      role: this.role,
      logGroup: this.logGroup,
      // Lambda's own lines (START, REPORT with the init duration) and ours as JSON records, queryable field by field.
      loggingFormat: lambda.LoggingFormat.JSON,
      // Traces of each invocation (init, duration, overhead) from the runtime itself: no SDK in the bundle, no cold-start cost.
      tracing: lambda.Tracing.ACTIVE,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'xray:PutTraceSegments and xray:PutTelemetryRecords (active tracing) support no resource-level permission.',
    });
  }
}
