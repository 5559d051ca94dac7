/**
 * The Lambda behind Custom::RetryproofRouteSecret: on create and update it ensures the route
 * secret (ensure-route-secret.ts); on delete it does nothing, so the sender's value outlives the
 * stack. It answers CloudFormation itself, at the event's presigned ResponseURL (CloudFormation
 * User Guide, "Custom resources": the provider "sends a response to the pre-signed S3 URL").
 */
import {
  CreateSecretCommand,
  DescribeSecretCommand,
  ReplicateSecretToRegionsCommand,
  ResourceExistsException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { ensureRouteSecret } from './ensure-route-secret.ts';
import type { SecretsAdmin } from './ensure-route-secret.ts';

/** The resource's properties, as lib/stateful/route-secrets.ts writes them. */
interface RouteSecretProperties {
  readonly SecretName: string;
  readonly Description: string;
  readonly ReplicaRegions?: readonly string[];
}

/** The fields of a CloudFormation custom resource event the handler reads. */
interface CustomResourceEvent {
  readonly RequestType: 'Create' | 'Update' | 'Delete';
  readonly ResponseURL: string;
  readonly StackId: string;
  readonly RequestId: string;
  readonly LogicalResourceId: string;
  readonly PhysicalResourceId?: string;
  readonly ResourceProperties: RouteSecretProperties;
}

const client = new SecretsManagerClient({});

const admin: SecretsAdmin = {
  async create(name, description, replicaRegions) {
    try {
      await client.send(
        new CreateSecretCommand({
          Name: name,
          Description: description,
          ...(replicaRegions.length === 0 ? {} : { AddReplicaRegions: replicaRegions.map((Region) => ({ Region })), ForceOverwriteReplicaSecret: true }),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ResourceExistsException) return false;
      throw error;
    }
  },
  async describe(name) {
    const out = await client.send(new DescribeSecretCommand({ SecretId: name }));
    return {
      deleted: out.DeletedDate !== undefined,
      ...(out.PrimaryRegion === undefined ? {} : { primaryRegion: out.PrimaryRegion }),
      replicas: (out.ReplicationStatus ?? []).map((r) => ({ region: r.Region ?? '', status: r.Status ?? '', ...(r.StatusMessage === undefined ? {} : { message: r.StatusMessage }) })),
    };
  },
  async replicate(name, regions) {
    await client.send(new ReplicateSecretToRegionsCommand({ SecretId: name, AddReplicaRegions: regions.map((Region) => ({ Region })), ForceOverwriteReplicaSecret: true }));
  },
};

const timing = { attempts: 10, intervalMs: 3000, sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) };

export const handler = async (event: CustomResourceEvent): Promise<void> => {
  const props = event.ResourceProperties;
  let failure: string | undefined;
  try {
    if (event.RequestType !== 'Delete') {
      await ensureRouteSecret(
        admin,
        { name: props.SecretName, description: props.Description, region: process.env.AWS_REGION ?? '', replicaRegions: props.ReplicaRegions ?? [] },
        timing,
      );
    }
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  }
  // Always answered: a custom resource left without an answer holds the stack for an hour.
  const response = await fetch(event.ResponseURL, {
    method: 'PUT',
    headers: { 'content-type': '' },
    body: JSON.stringify({
      Status: failure === undefined ? 'SUCCESS' : 'FAILED',
      Reason: failure ?? 'ensured',
      PhysicalResourceId: props.SecretName,
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
    }),
  });
  if (!response.ok) throw new Error(`cloudformation refused the answer: ${response.status}`);
};
