import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { tableActions, tableKeys } from '#lib/db/table.ts';
import type { RouteSpec } from '#lib/http/route.ts';
import { routeEntries } from '#lib/routes/index.ts';
import { EndpointFunction, LOG_RETENTION } from '#infra/constructs/endpoint-function.ts';

/** Served on every image: an SVG opened directly is a document, and must not run script. */
export const IMAGE_CONTENT_SECURITY_POLICY = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox";

export interface StoreApiStackProps extends StackProps {
  stage: string;
  /** Output of infra/build.ts: one `<function name>/index.mjs` per route. */
  functionsDir: string;
  /** Sender of the mails; its address or domain must be a verified SES identity. */
  mailFrom?: string;
  /** Defaults to the route table; tests pass a table that exercises every kind of grant. */
  routes?: readonly (readonly [string, RouteSpec])[];
}

const toPascalCase = (name: string) => name.replace(/(^|-)([a-z0-9])/g, (_, _dash: string, letter: string) => letter.toUpperCase());

/** HTTP API variables only ($context.identity.user and friends are REST-only). */
const API_ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    requestTime: '$context.requestTime',
    domainName: '$context.domainName',
    routeKey: '$context.routeKey',
    status: '$context.status',
    protocol: '$context.protocol',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    integrationError: '$context.integrationErrorMessage',
    userAgent: '$context.identity.userAgent',
  }),
);

const AUTHORIZATION_IN_FUNCTIONS =
  'Every route authenticates in its function (API token, API key, buyer access token or session cookie, looked up in the table, per the spec); public routes are public by design.';

/**
 * The store API on AWS: one table, the images bucket behind CloudFront, and one Lambda per
 * route of the route table on one of two HTTP APIs (/v1, and the stores' own domains).
 * Every function's permissions come from its route entry (access, uses).
 */
export class StoreApiStack extends Stack {
  readonly table: dynamodb.Table;
  readonly imagesBucket: s3.Bucket;
  readonly imagesCdn: cloudfront.Distribution;
  readonly apis: Record<RouteSpec['api'], apigwv2.HttpApi>;
  readonly functions = new Map<string, EndpointFunction>();

  constructor(scope: Construct, id: string, props: StoreApiStackProps) {
    super(scope, id, props);
    const isProduction = props.stage === 'prod';
    // A stage other than prod is disposable: its table and log groups go with the stack.
    const removalPolicy = isProduction ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: tableKeys.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: tableKeys.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableKeys.ttlAttribute,
      deletionProtection: isProduction,
      removalPolicy,
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

    this.imagesCdn = this.createImagesCdn(accessLogsBucket);
    const imagesBaseUrl = `https://${this.imagesCdn.distributionDomainName}`;

    this.apis = {
      api: this.createHttpApi('Api', 'Store API /v1', removalPolicy),
      store: this.createHttpApi('StoreDomainApi', "Store API on the stores' own domains", removalPolicy),
    };

    for (const [name, spec] of props.routes ?? routeEntries()) {
      const codeDir = join(props.functionsDir, name);
      if (!existsSync(join(codeDir, 'index.mjs'))) {
        throw new Error(`No bundle for ${name} in ${props.functionsDir}: run buildFunctions() (npm run build) first`);
      }
      const uses = new Set(spec.uses ?? []);
      const endpoint = new EndpointFunction(this, toPascalCase(name), {
        codeDir,
        description: `${spec.method} ${spec.path}`,
        logRemovalPolicy: removalPolicy,
        environment: {
          TABLE_NAME: this.table.tableName,
          // Not a permission, only a URL prefix: any function may render a package's image.
          IMAGES_BASE_URL: imagesBaseUrl,
          ...(uses.has('images') && { IMAGES_BUCKET: this.imagesBucket.bucketName }),
          ...(uses.has('mail') && { MAILER: 'ses', ...(props.mailFrom && { MAIL_FROM: props.mailFrom }) }),
        },
      });
      this.grantRouteAccess(endpoint, spec, props.mailFrom);
      this.apis[spec.api].addRoutes({
        path: spec.path,
        methods: [apigwv2.HttpMethod[spec.method]],
        integration: new HttpLambdaIntegration(`${toPascalCase(name)}Integration`, endpoint.function),
      });
      this.functions.set(name, endpoint);
    }

    new CfnOutput(this, 'ApiUrl', { value: `${this.apis.api.apiEndpoint}/v1`, description: 'Base URL of the /v1 API' });
    new CfnOutput(this, 'StoreDomainApiUrl', {
      value: this.apis.store.apiEndpoint,
      description: "Origin the stores' own domains point to (store-domain routes)",
    });
    new CfnOutput(this, 'ImagesUrl', { value: imagesBaseUrl, description: 'Public base URL of package images' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
  }

  private createImagesCdn(logBucket: s3.IBucket): cloudfront.Distribution {
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
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.imagesBucket),
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

  private createHttpApi(id: string, description: string, logRemovalPolicy: RemovalPolicy): apigwv2.HttpApi {
    const api = new apigwv2.HttpApi(this, id, { apiName: `${this.stackName}-${id}`, description, createDefaultStage: false });
    const accessLogs = new logs.LogGroup(this, `${id}AccessLogs`, { retention: LOG_RETENTION, removalPolicy: logRemovalPolicy });
    api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: { destination: new apigwv2.LogGroupLogDestination(accessLogs), format: API_ACCESS_LOG_FORMAT },
    });
    Validations.of(api).acknowledge({ id: 'AwsSolutions-APIG4', reason: AUTHORIZATION_IN_FUNCTIONS });
    return api;
  }

  /**
   * Least privilege from the route entry: the table actions of its access (grantReadData would add
   * Scan, which no code sends and which reads every store at once); bucket and SES only for their users.
   */
  private grantRouteAccess(endpoint: EndpointFunction, spec: RouteSpec, mailFrom: string | undefined): void {
    if (spec.access !== 'none') {
      this.table.grant(endpoint.role, ...tableActions[spec.access].map((action) => `dynamodb:${action}`));
      const tableId = this.getLogicalId(this.table.node.defaultChild as dynamodb.CfnTable);
      Validations.of(endpoint).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`,
        reason: `Queries on the GSIs (${tableKeys.indexes.map((index) => index.name).join(', ')}) of the one table this function uses.`,
      });
    }

    const uses = new Set(spec.uses ?? []);
    if (uses.has('images')) {
      // Object level only: upload (also what a presigned POST is checked against), replace, delete.
      endpoint.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'], resources: [this.imagesBucket.arnForObjects('*')] }),
      );
      // Without ListBucket, S3 answers 403 instead of 404 for a key that is not there (yet).
      endpoint.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [this.imagesBucket.bucketArn] }));
      const bucketId = this.getLogicalId(this.imagesBucket.node.defaultChild as s3.CfnBucket);
      Validations.of(endpoint).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
        reason: 'Image objects get a new random key per upload, so the keys are not known in advance.',
      });
    }
    if (uses.has('mail')) {
      endpoint.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ses:SendEmail'], resources: this.mailIdentityArns(mailFrom) }));
      if (!mailFrom) {
        Validations.of(endpoint).acknowledge({
          id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]',
          reason: 'No mailFrom in the CDK context: any verified identity of this account and region. Pass -c mailFrom=... to scope it.',
        });
      }
    }
  }

  /** SES authorizes a send against the sender's address identity or its domain identity, whichever is verified. */
  private mailIdentityArns(mailFrom: string | undefined): string[] {
    const identityArn = (identity: string) => this.formatArn({ service: 'ses', resource: 'identity', resourceName: identity });
    if (!mailFrom) return [identityArn('*')];
    const domain = mailFrom.slice(mailFrom.lastIndexOf('@') + 1);
    return [identityArn(mailFrom), identityArn(domain)];
  }
}
