import { Duration, Fn, Stack, Validations } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import type { Construct } from 'constructs';
import { LOG_RETENTION } from '#infra/constructs/endpoint-function.ts';
import { DOCS_PATH } from '#infra/docs-headers.ts';
import { DOCS_KEY_PREFIX, type DataExports } from '#infra/stacks/data-stack.ts';
import { removalPolicyOf, type StageStackProps } from '#infra/stacks/stage.ts';

export interface DocsStackProps extends StageStackProps {
  /** Output of infra/docs.ts (`.build/docs`): the API reference page's files. */
  docsDir: string;
  data: DataExports;
}

/**
 * The API reference page shipped as static files: `.build/docs` copied into the images bucket
 * under `docs/`, which the CDN serves at `/docs*` (infra/stacks/data-stack.ts). Nothing renders it
 * at request time. The copy is CDK's BucketDeployment, a CloudFormation custom resource whose
 * Lambda runs at deploy time only, then invalidates `/docs*` on the CDN.
 *
 * A stack of its own because the page follows the route table: a new route changes this stack and
 * its area's, never the data stack.
 */
export class StoreDocsStack extends Stack {
  readonly deployment: s3deploy.BucketDeployment;

  constructor(scope: Construct, id: string, props: DocsStackProps) {
    super(scope, id, props);
    const { data } = props;
    const bucket = s3.Bucket.fromBucketAttributes(this, 'ImagesBucket', { bucketName: data.imagesBucketName, bucketArn: data.imagesBucketArn });
    const distribution = cloudfront.Distribution.fromDistributionAttributes(this, 'ImagesCdn', {
      distributionId: data.imagesCdnId,
      // `https://<domain>`: the domain is the third part.
      domainName: Fn.select(2, Fn.split('/', data.imagesBaseUrl)),
    });
    this.deployment = new s3deploy.BucketDeployment(this, 'ApiReference', {
      sources: [s3deploy.Source.asset(props.docsDir)],
      destinationBucket: bucket,
      // Pruning stays inside the prefix: the images beside it are never touched.
      destinationKeyPrefix: DOCS_KEY_PREFIX,
      distribution,
      distributionPaths: [`${DOCS_PATH}*`],
      cacheControl: [s3deploy.CacheControl.setPublic(), s3deploy.CacheControl.maxAge(Duration.minutes(5))],
      logGroup: new logs.LogGroup(this, 'ApiReferenceDeploymentLogs', { retention: LOG_RETENTION, removalPolicy: removalPolicyOf(props.stage) }),
    });
    // CDK's own handler and the grants CDK writes for it: run by CloudFormation at deploy time, never by a request.
    const generated = (finding: string) => `AwsSolutions-IAM5[${finding}]`;
    const importedBucketArn = (this.resolve(data.imagesBucketArn) as { 'Fn::ImportValue': string })['Fn::ImportValue'];
    Validations.of(this).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: "CDK's BucketDeployment handler writes its logs with the basic execution role; it runs at deploy time only.",
      },
      ...['Action::s3:GetObject*', 'Action::s3:GetBucket*', 'Action::s3:List*', 'Action::s3:DeleteObject*', 'Action::s3:Abort*'].map((finding) => ({
        id: generated(finding),
        reason: 'The object actions CDK grants its BucketDeployment handler to sync the docs/ prefix (pruning stays inside it); deploy time only.',
      })),
      {
        id: generated('Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*'),
        reason: "The handler reads the page's zip from CDK's asset bucket, whose keys are content hashes.",
      },
      {
        id: generated(`Resource::${importedBucketArn}/*`),
        reason: 'The handler writes the docs/ prefix of the images bucket; CDK grants on the bucket, the prefix is enforced by the deployment.',
      },
      { id: 'AwsSolutions-L1', reason: "The runtime of CDK's BucketDeployment handler is chosen by aws-cdk-lib (Python); it runs at deploy time only." },
      { id: generated('Resource::*'), reason: 'cloudfront:CreateInvalidation, which CDK grants on every distribution; the handler invalidates /docs* of the images CDN only.' },
    );
  }
}
