/**
 * The one place where a failed DynamoDB condition becomes data. A transition either
 * happened, or it did not and the item that stood in the way comes back (when asked for).
 *
 * A write recognises its own success (protocol v3, the write nonce). Every transition sets
 * `writeId = :writeId`, a nonce fresh for each call. A write can commit and still answer an
 * error (a 500, a reset connection, a timeout: DynamoDB's Developer Guide, "Error handling
 * with DynamoDB", says such a request "may or may not have succeeded"), and the SDK then sends
 * the identical command again (node_modules/@smithy/core/dist-es/submodules/retry/, the
 * standard strategy; the command is serialised once, so every attempt carries the same
 * nonce). That retry meets its own committed first attempt and fails its condition. Asked
 * with ReturnValuesOnConditionCheckFailure ALL_OLD, the refusal returns the item as it
 * stands: if its writeId is ours, the write is ours and counts as done.
 *   t0 attempt 1: committed, answer lost | t1 attempt 2: refused, ALL_OLD.writeId = ours -> ok
 *   t0 attempt 1: committed | t1 another write (its own writeId) | t2 attempt 2: refused, not ours
 * The second line is the one the nonce cannot tell: another writer moved the record between our
 * two attempts, so the caller acts as if refused (and hands its message back, never deletes it).
 */
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, PutCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/** The attribute every transition writes its nonce to. */
export const WRITE_ID = 'writeId';
/** The expression value that carries a transition's nonce. */
export const WRITE_ID_VALUE = ':writeId';

/** A fresh nonce for one write (one call; the SDK's retries of it carry the same). */
export function newWriteId(): string {
  return randomUUID();
}

export type ConditionalOutcome =
  /** `replayed`: the condition failed, but on the item our own first attempt wrote (see above). */
  | { readonly ok: true; readonly item: Record<string, unknown> | undefined; readonly replayed?: boolean }
  /** The condition failed; `old` is the item as it stood (ALL_OLD), undefined when absent or not asked for. */
  | { readonly ok: false; readonly old: Record<string, unknown> | undefined };

/**
 * A second write that follows a transition once it is done (ours, or recognised as ours): it
 * moves the record's expiry forward, never back, where the transition itself cannot compute
 * the later of two expiries (DynamoDB's update expressions have no max()). Its refusal means
 * the record lives long enough already, or is another generation.
 */
export interface ExpiryFollowUp {
  readonly receivedAt: number;
  /** Epoch seconds. */
  readonly keepUntilSeconds: number;
}

/** A transition's input, with the follow-up the helper makes after it. */
export type ConditionalUpdateInput = UpdateCommandInput & { readonly extendExpiry?: ExpiryFollowUp };

function outcomeOf(err: unknown, writeId: unknown): ConditionalOutcome {
  if (!(err instanceof ConditionalCheckFailedException)) throw err;
  // The old item comes back as raw attribute values even through the document client.
  const old = err.Item === undefined ? undefined : unmarshall(err.Item);
  if (writeId !== undefined && old?.[WRITE_ID] === writeId) return { ok: true, item: old, replayed: true };
  return { ok: false, old };
}

/**
 * An UpdateItem whose failed condition is an answer, not an error. A transition that carries a
 * nonce (`:writeId`) is asked with ALL_OLD, and a refusal that shows the nonce is its own success.
 */
export async function conditionalUpdate(doc: DynamoDBDocumentClient, input: ConditionalUpdateInput): Promise<ConditionalOutcome> {
  const { extendExpiry, ...update } = input;
  const writeId: unknown = update.ExpressionAttributeValues?.[WRITE_ID_VALUE];
  let outcome: ConditionalOutcome;
  try {
    const out = await doc.send(
      new UpdateCommand({ ...update, ...(writeId === undefined ? {} : { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }) }),
    );
    outcome = { ok: true, item: out.Attributes };
  } catch (err) {
    outcome = outcomeOf(err, writeId);
  }
  if (outcome.ok && extendExpiry !== undefined) await extend(doc, update, extendExpiry);
  return outcome;
}

async function extend(doc: DynamoDBDocumentClient, update: UpdateCommandInput, follow: ExpiryFollowUp): Promise<void> {
  try {
    await doc.send(
      new UpdateCommand({
        TableName: update.TableName,
        Key: update.Key,
        ConditionExpression: 'receivedAt = :receivedAt AND expiresAt < :keepUntil',
        UpdateExpression: 'SET expiresAt = :keepUntil',
        ExpressionAttributeValues: { ':receivedAt': follow.receivedAt, ':keepUntil': follow.keepUntilSeconds },
      }),
    );
  } catch (err) {
    // Refused: it lives that long already (a retried extension lands here too), or it is another generation.
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
}

/** A PutItem whose failed condition is an answer, not an error; an item that carries a writeId recognises its own success. */
export async function conditionalPut(doc: DynamoDBDocumentClient, input: PutCommandInput): Promise<ConditionalOutcome> {
  const writeId: unknown = input.Item?.[WRITE_ID];
  try {
    await doc.send(new PutCommand({ ...input, ...(writeId === undefined ? {} : { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }) }));
    return { ok: true, item: undefined };
  } catch (err) {
    return outcomeOf(err, writeId);
  }
}
