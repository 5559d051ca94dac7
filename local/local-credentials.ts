/**
 * The fake credentials and the region every client of the local services uses. Apart from
 * local-aws.ts, which starts the services: the CLI's `--local` clients need these two
 * constants, not DynamoDB Local and fauxqs, which an installed package may not have (they are
 * its optional peers) and which need a newer Node than the CLI does.
 */

/** Fixed fake credentials: the local services accept anything, real AWS is never reached. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
export const LOCAL_REGION = 'us-east-1';
