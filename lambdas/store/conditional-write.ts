/**
 * The one place where a failed DynamoDB condition becomes data. A transition either
 * happened, or it did not and the item that stood in the way comes back (when asked for).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, PutCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

export type ConditionalOutcome =
  | { readonly ok: true; readonly item: Record<string, unknown> | undefined }
  /** The condition failed; `old` is the item as it stood (ALL_OLD), undefined when absent or not asked for. */
  | { readonly ok: false; readonly old: Record<string, unknown> | undefined };

function refused(err: unknown): ConditionalOutcome {
  if (!(err instanceof ConditionalCheckFailedException)) throw err;
  // The old item comes back as raw attribute values even through the document client.
  return { ok: false, old: err.Item === undefined ? undefined : unmarshall(err.Item) };
}

/** An UpdateItem whose failed condition is an answer, not an error. */
export async function conditionalUpdate(doc: DynamoDBDocumentClient, input: UpdateCommandInput): Promise<ConditionalOutcome> {
  try {
    const out = await doc.send(new UpdateCommand(input));
    return { ok: true, item: out.Attributes };
  } catch (err) {
    return refused(err);
  }
}

/** A PutItem whose failed condition is an answer, not an error. */
export async function conditionalPut(doc: DynamoDBDocumentClient, input: PutCommandInput): Promise<ConditionalOutcome> {
  try {
    await doc.send(new PutCommand(input));
    return { ok: true, item: undefined };
  } catch (err) {
    return refused(err);
  }
}
