import { S3Client } from '@aws-sdk/client-s3';
import { config } from '#lib/config.ts';

/**
 * The images bucket and the one S3 client of the process, created at init. Only functions whose
 * route `uses: ['images']` import this module: they get IMAGES_BUCKET (and the bucket grant), so a
 * missing bucket fails at cold start.
 *
 * With S3_ENDPOINT set (the local stack's s3rver, or another S3) the client talks path-style to
 * that endpoint with S3_ACCESS_KEY_ID/S3_SECRET_ACCESS_KEY (s3rver accepts only S3RVER/S3RVER),
 * and computes checksums only when an operation requires one: with the SDK's default, s3rver
 * stores a streamed upload with its chunk framing inside the object.
 */
export const BUCKET = config.imagesBucket;

const emulator = config.s3Endpoint
  ? {
      endpoint: config.s3Endpoint,
      forcePathStyle: true,
      credentials: {
        accessKeyId: process.env.S3_ACCESS_KEY_ID || 'S3RVER',
        secretAccessKey: process.env.S3_SECRET_ACCESS_KEY || 'S3RVER',
      },
      requestChecksumCalculation: 'WHEN_REQUIRED' as const,
      responseChecksumValidation: 'WHEN_REQUIRED' as const,
    }
  : {};

export const s3 = new S3Client({ region: config.region, ...emulator });
