declare module 's3rver' {
  interface S3rverOptions {
    address?: string;
    port?: number;
    directory: string;
    silent?: boolean;
    resetOnClose?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }
  /** The part of Koa's context (s3rver is a Koa application) the local stack uses. */
  interface S3rverContext {
    set(headers: Record<string, string>): void;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    /** Koa's middleware chain, composed when the server starts. */
    middleware: ((context: S3rverContext, next: () => Promise<void>) => Promise<void>)[];
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
