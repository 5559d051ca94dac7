/**
 * Issue 43, defect 3: an action's error text that holds a character SQS refuses (U+FFFF, U+FFFE,
 * a lone surrogate) must not keep the FAILED record's dead-letter copy off the queue: SendMessage
 * answers InvalidMessageContents, and `fail` has committed by then. The real ingest and executor
 * handlers on DynamoDB Local and fauxqs.
 */
import { describe, expect, it } from 'vitest';
import { PermanentActionError } from '../../lambdas/actions/action.ts';
import type { Action } from '../../lambdas/actions/action.ts';
import { executorFixture } from '../support/executor-fixture.ts';

const REFUSED = ['\uFFFF', '\uFFFE', '\uD800'];

describe('a failed action whose error text SQS would refuse', () => {
  it.each(REFUSED.map((c) => [`U+${c.charCodeAt(0).toString(16).toUpperCase()}`, c]))(
    'still reaches the DLQ with its copy when the error holds %s',
    async (_name, char) => {
      // Prepare: the action fails for good with the character in its message.
      const action: Action = () => Promise.reject(new PermanentActionError(`upstream said ${char}no${char}`));
      const fx = await executorFixture({ actions: { refusing: action }, action: 'refusing' });
      const key = await fx.deliver({ amount: 7 });
      // Act: the run fails, its copy goes around the work queue to the DLQ.
      await fx.pollUntilReceived();
      await fx.drain();
      // Assess: FAILED, and its copy is in the DLQ with the character replaced.
      const dead = await fx.takeDeadLetters();
      expect(dead).toHaveLength(1);
      expect(await fx.record(key)).toMatchObject({ status: 'FAILED', lastError: 'PermanentActionError: upstream said \uFFFDno\uFFFD' });
      expect(dead[0]).toMatchObject({ key, lastError: 'PermanentActionError: upstream said \uFFFDno\uFFFD' });
    },
  );
});
