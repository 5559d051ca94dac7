/**
 * The local stack's entry point for the operator CLI: everything cli/ uses of local/ is
 * exported here, and cli/ imports local/ through this file only (test/cli/layout.test.ts
 * holds both folders to that). What is not here is the local stack's own business.
 */
export {
  ENDPOINTS_FILE,
  isAlive,
  localDir,
  localRegionIn,
  localRegionsIn,
  readEndpointsFile,
  readRunningEndpoints,
  StackNotRunningError,
  UnknownRegionError,
} from './endpoints-file.ts';
export type { LocalEndpoints, LocalRegionEndpoint } from './endpoints-file.ts';
export type { IngestCounts } from './ingest-tally.ts';
export { localDynamoClient, localS3Client, localSqsClient } from './aws-clients.ts';
export { DEMO_ROUTE } from './local-settings.ts';
export { newKey, recordKeyFor, sampleBody, signSample, webhookUrl } from './sample-delivery.ts';
export type { SampleRoute, SignedRequest } from './sample-delivery.ts';
export { FAUXQS_RELEASE_SECONDS } from './local-message-visibility.ts';
export { workTaken } from './work-taken.ts';
// The stack itself has its own entry point, local/run-local-stack.ts: `retryproof start`
// (cli/commands/start.ts) loads it on demand, so no other command loads DynamoDB Local,
// fauxqs or the handlers.
