/**
 * Headers the image origin adds to every image (extensions section 6): an uploaded SVG must never
 * run script nor be sniffed into another type. CloudFront sends them on AWS (the response headers
 * policy of infra/stacks/data-stack.ts); the local stack's S3 emulator sends the same values.
 * Kept apart from the CDK stack so the local stack need not load aws-cdk-lib to read them.
 */
export const IMAGE_CONTENT_SECURITY_POLICY = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox";

export const IMAGE_ORIGIN_HEADERS = {
  'Content-Security-Policy': IMAGE_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
} as const;
