import { CfnOutput, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { tableKeys, tableStream } from '#lib/db/table.ts';
import { isProduction, removalPolicyOf, type StageStackProps } from '#infra/stacks/stage.ts';
import { IMAGE_CONTENT_SECURITY_POLICY } from '#infra/image-origin-headers.ts';
import { DOCS_CONTENT_SECURITY_POLICY, DOCS_PATH } from '#infra/docs-headers.ts';

export { IMAGE_CONTENT_SECURITY_POLICY };

/**
 * What the area stacks take from the data stack: CloudFormation exports with readable names,
 * imported by value (`Fn::ImportValue`). A handful of strong references, in one place: CloudFormation
 * refuses to delete the table or the bucket while a function still uses them.
 */
export interface DataExports {
  tableName: string;
  tableArn: string;
  imagesBucketName: string;
  imagesBucketArn: string;
  imagesBaseUrl: string;
  /** The table's stream, which the webhook router reads (infra/stacks/webhook-stack.ts). */
  tableStreamArn: string;
  /** The server secret of the keyed hashes (lib/server-secret.ts), readable only by the functions whose route `uses: ['secret']`. */
  serverSecretArn: string;
  /**
   * The customer-managed KMS key of the payment provider secrets (lib/payments/secrets.ts): Encrypt
   * only for the routes that say `uses: ['provider-secrets-seal']`, Decrypt only for those that say
   * `provider-secrets-open`.
   */
  paymentSecretsKeyArn: string;
  /** The CDN, whose `/docs*` cache the API reference's deployment invalidates (infra/stacks/docs-stack.ts). */
  imagesCdnId: string;
}

/** Where the API reference lives in the images bucket, served by the CDN's `/docs*` behaviour. */
export const DOCS_KEY_PREFIX = `${DOCS_PATH.slice(1)}/`;

/**
 * CloudFront Function (viewer request, not a Lambda): S3 has no index document behind origin access
 * control, so `/docs` and `/docs/` are answered with `/docs/index.html`. Rewrites, renders nothing.
 */
export const DOCS_INDEX_FUNCTION_CODE = `function handler(event) {
  var request = event.request;
  if (request.uri === '${DOCS_PATH}' || request.uri === '${DOCS_PATH}/') request.uri = '${DOCS_PATH}/index.html';
  return request;
}`;

/**
 * The state of a stage, in a stack of its own that route changes never touch: the table, the
 * images bucket behind CloudFront, and the bucket of their access logs.
 */
export class StoreDataStack extends Stack {
  readonly table: dynamodb.Table;
  readonly imagesBucket: s3.Bucket;
  readonly imagesCdn: cloudfront.Distribution;
  readonly serverSecret: secretsmanager.Secret;
  readonly paymentSecretsKey: kms.Key;
  /** The API reference's behaviour on the CDN: its viewer-request function and its response headers. */
  readonly docsIndexFunction: cloudfront.Function;
  readonly docsHeaders: cloudfront.ResponseHeadersPolicy;
  readonly exports: DataExports;

  constructor(scope: Construct, id: string, props: StageStackProps) {
    super(scope, id, props);
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: tableKeys.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: tableKeys.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableKeys.ttlAttribute,
      // Webhooks are derived from the changes (lib/flows/webhook-router.ts): both images of each.
      stream: dynamodb.StreamViewType[tableStream.viewType],
      deletionProtection: isProduction(props.stage),
      removalPolicy: removalPolicyOf(props.stage),
    });
    for (const index of tableKeys.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }

    // CloudFormation cannot delete a bucket that holds objects, and both always do: kept in every stage.
    const accessLogsBucket = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      // CloudFront standard logging writes its files with an ACL.
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.imagesBucket = new s3.Bucket(this, 'Images', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      serverAccessLogsBucket: accessLogsBucket,
      serverAccessLogsPrefix: 'images-bucket/',
      removalPolicy: RemovalPolicy.RETAIN,
      // Browsers post files over 4 MB straight to the bucket with a presigned POST
      // (POST /v1/app/package/{id}/image/upload); the signed policy, not the origin, limits what lands.
      cors: [{ allowedMethods: [s3.HttpMethods.POST], allowedOrigins: ['*'], allowedHeaders: ['*'], maxAge: 3600 }],
    });

    // The key of every keyed hash (login codes, cursors, quote ids), generated at deploy: no manual
    // step. JSON {"current": ...}; a rotation adds "previous" (docs/operations.md, "The server secret").
    this.serverSecret = new secretsmanager.Secret(this, 'ServerSecret', {
      description: `${this.stackName}: key of the keyed hashes (login codes, cursors, quote ids)`,
      generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'current', passwordLength: 64, excludePunctuation: true },
      removalPolicy: removalPolicyOf(props.stage),
    });
    Validations.of(this.serverSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotated by hand in steps (docs/operations.md, "The server secret"): the previous key must stay accepted for a grace period, which a single-step rotation Lambda would not keep.',
    });

    // One customer-managed key of the stage for every store's provider secrets, each ciphertext bound
    // to its store and provider by the encryption context; every decrypt is in CloudTrail. The key
    // policy leaves use to IAM: only the routes the route table names get Encrypt or Decrypt.
    this.paymentSecretsKey = new kms.Key(this, 'PaymentSecretsKey', {
      description: `${this.stackName}: payment provider secrets (encryption context: purpose, provider, store_id)`,
      enableKeyRotation: true,
      // Without the key the stored secrets are lost: kept in every stage, like the buckets.
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const imagesOrigin = origins.S3BucketOrigin.withOriginAccessControl(this.imagesBucket);
    this.imagesCdn = this.createImagesCdn(imagesOrigin, accessLogsBucket);
    ({ indexFunction: this.docsIndexFunction, headers: this.docsHeaders } = this.addDocsBehavior(imagesOrigin));
    const imagesBaseUrl = `https://${this.imagesCdn.distributionDomainName}`;

    const exportAs = (name: string, value: string) => this.exportValue(value, { name: `${this.stackName}-${name}` });
    this.exports = {
      tableName: exportAs('TableName', this.table.tableName),
      tableArn: exportAs('TableArn', this.table.tableArn),
      imagesBucketName: exportAs('ImagesBucketName', this.imagesBucket.bucketName),
      imagesBucketArn: exportAs('ImagesBucketArn', this.imagesBucket.bucketArn),
      imagesBaseUrl: exportAs('ImagesBaseUrl', imagesBaseUrl),
      tableStreamArn: exportAs('TableStreamArn', this.table.tableStreamArn!),
      serverSecretArn: exportAs('ServerSecretArn', this.serverSecret.secretArn),
      paymentSecretsKeyArn: exportAs('PaymentSecretsKeyArn', this.paymentSecretsKey.keyArn),
      imagesCdnId: exportAs('ImagesCdnId', this.imagesCdn.distributionId),
    };

    new CfnOutput(this, 'ImagesUrl', { value: imagesBaseUrl, description: 'Public base URL of package images' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'ApiReferenceUrl', { value: `${imagesBaseUrl}${DOCS_PATH}`, description: 'The API reference page (Swagger UI, static files)' });
  }

  /**
   * The API reference, as static files under `docs/` of the images bucket (deployed by
   * infra/stacks/docs-stack.ts), on the same origin as the images but with headers of its own:
   * the images' policy (`sandbox`, no script) would stop Swagger UI, and Swagger UI's must not reach the images.
   */
  private addDocsBehavior(origin: cloudfront.IOrigin) {
    const headers = new cloudfront.ResponseHeadersPolicy(this, 'DocsHeaders', {
      comment: 'The API reference runs its own script only and loads nothing from elsewhere',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: DOCS_CONTENT_SECURITY_POLICY, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
      },
    });
    const indexFunction = new cloudfront.Function(this, 'DocsIndex', {
      comment: 'Serves /docs/index.html for /docs and /docs/',
      code: cloudfront.FunctionCode.fromInline(DOCS_INDEX_FUNCTION_CODE),
      runtime: cloudfront.FunctionRuntime.JS_2_0,
    });
    this.imagesCdn.addBehavior(`${DOCS_PATH}*`, origin, {
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
      // Each deployment invalidates /docs*: cached until the next one.
      cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
      responseHeadersPolicy: headers,
      functionAssociations: [{ function: indexFunction, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
    });
    return { indexFunction, headers };
  }

  private createImagesCdn(origin: cloudfront.IOrigin, logBucket: s3.IBucket): cloudfront.Distribution {
    const imageHeaders = new cloudfront.ResponseHeadersPolicy(this, 'ImageHeaders', {
      comment: 'Images never run script nor get sniffed into another type',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: IMAGE_CONTENT_SECURITY_POLICY, override: true },
        contentTypeOptions: { override: true },
      },
    });
    const cdn = new cloudfront.Distribution(this, 'ImagesCdn', {
      comment: `${this.stackName} package images`,
      defaultBehavior: {
        origin,
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        // Every upload gets a new key, so an object never changes under its URL.
        cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: imageHeaders,
      },
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      enableLogging: true,
      logBucket,
      logFilePrefix: 'images-cdn/',
    });
    Validations.of(cdn).acknowledge(
      { id: 'AwsSolutions-CFR1', reason: 'Images of a store are public to the whole world, like the store itself.' },
      { id: 'AwsSolutions-CFR2', reason: 'Static, cache-only GET of images: no request reaches code a WAF would protect.' },
      {
        id: 'AwsSolutions-CFR4',
        reason: 'Served on the default *.cloudfront.net certificate, whose minimum TLS version cannot be raised; a custom domain with its own certificate would fix it.',
      },
    );
    return cdn;
  }
}
