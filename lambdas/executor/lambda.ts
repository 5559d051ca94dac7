/**
 * The executor Lambda, over the user's action modules. The construct generates the
 * function's entry at synth: it imports each action module a route names and calls
 * {@link executorLambda} with them, so the user's code is bundled in and the executor
 * itself knows no action. Runs once per cold start.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { bodiesClient } from '../store/s3-body-objects.ts';
import { actionRegistryOf } from '../actions/action-modules.ts';
import type { ModulesByAction } from '../actions/action-modules.ts';
import { assertActionsSupplied } from '../config/resolve-config.ts';
import { deploymentFromEnv } from '../config/deployment.ts';
import { wireExecutor } from './wire-executor.ts';

/**
 * @param actionModules each action's module, by the name routes give it
 * @throws at cold start, for a module of the wrong shape or a route whose action is missing
 */
export function executorLambda(actionModules: ModulesByAction) {
  const deployment = deploymentFromEnv();
  const actions = actionRegistryOf(actionModules);
  assertActionsSupplied(deployment.config, [...actions.keys()]);
  const s3 = deployment.bodyBucket === undefined ? {} : { s3: bodiesClient() };
  return wireExecutor(deployment, { dynamo: new DynamoDBClient({}), sqs: new SQSClient({}), ...s3 }, { actions });
}
