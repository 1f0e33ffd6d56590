/**
 * Writes of jobs: missing records written from their delivery, the worker's one-write claim, compare-and-swap
 * updates on the version read, and lease renewals that leave the version alone.
 */
import { isDeepStrictEqual } from 'node:util';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { JobConflictError } from '../../core/errors';
import {
  applyChanges,
  type JobChanges,
  type JobRecord,
  type JobStatus,
  awaitsFirstPickup as untouched,
} from '../../core/job';
import type { EnsuredJobs, JobClaim } from '../../ports/job-repository';
import {
  claimCondition,
  claimKeepingLease,
  itemDoesNotExist,
  leaseHeldBy,
  versionUnchanged,
} from './conditions';
import { JobStoreError } from './errors';
import { jobItem, jobKey, toJob } from './keys';
import { inRounds } from './paging';
import type { JobTableContext } from './table';

/** DynamoDB's limit per BatchGetItem request. */
const BATCH_GET_MAX = 100;

interface JobState {
  status: JobStatus;
  version: number;
}

/** Those of `jobIds` that exist and wait for their first pickup. */
const waitingOf = (jobIds: readonly string[], states: ReadonlyMap<string, JobState>): string[] =>
  jobIds.filter((jobId) => {
    const state = states.get(jobId);
    return state !== undefined && untouched(state);
  });

/**
 * Puts a job record only where no job is; false when one is (written meanwhile by another caller, who sends
 * it). Any other failure is a JobStoreError for `operation`.
 */
export async function putJobIfNew(
  table: JobTableContext,
  job: JobRecord,
  operation: string,
): Promise<boolean> {
  try {
    await table.ddb.send(
      new PutCommand({
        TableName: table.tableName,
        Item: jobItem(job, table),
        ConditionExpression: itemDoesNotExist,
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw new JobStoreError(operation, error);
  }
}

/**
 * Writes the job records that do not exist yet (an existing job is left as it is): one batch read, then a
 * conditional put per missing job. Returns the ids it wrote and those of existing jobs no worker touched.
 */
export async function ensureJobs(table: JobTableContext, jobs: readonly JobRecord[]): Promise<EnsuredJobs> {
  const jobIds = jobs.map((job) => job.jobId);
  const states = await jobStates(table, jobIds);
  const created = new Set<string>();
  await Promise.all(
    jobs.map(async (job) => {
      if (states.has(job.jobId)) return;
      if (await putJobIfNew(table, job, 'record a job')) created.add(job.jobId);
    }),
  );
  return { created: jobIds.filter((jobId) => created.has(jobId)), untouched: waitingOf(jobIds, states) };
}

/** Status and version of the jobs that exist, by job id: BatchGetItem, strongly consistent. */
async function jobStates(table: JobTableContext, jobIds: readonly string[]): Promise<Map<string, JobState>> {
  const states = new Map<string, JobState>();
  const unique = [...new Set(jobIds)];
  for (let start = 0; start < unique.length; start += BATCH_GET_MAX) {
    const keys = unique.slice(start, start + BATCH_GET_MAX).map((jobId) => ({ pk: jobKey(jobId) }));
    await inRounds(keys, 'read jobs', async (left) => {
      const result = await table.ddb.send(
        new BatchGetCommand({
          RequestItems: {
            [table.tableName]: {
              Keys: left,
              ConsistentRead: true,
              ProjectionExpression: 'jobId, #status, version',
              ExpressionAttributeNames: { '#status': 'status' },
            },
          },
        }),
      );
      for (const item of result.Responses?.[table.tableName] ?? []) {
        states.set(String(item.jobId), { status: item.status as JobStatus, version: Number(item.version) });
      }
      return (result.UnprocessedKeys?.[table.tableName]?.Keys ?? []) as typeof left;
    });
  }
  return states;
}

/**
 * The claim as one conditional update returning the job (ALL_NEW), on the claim's conditions (see the port);
 * its writes are those `transitions.claim` makes, with the version bumped. A lease within `keepLeaseWithin` is
 * kept (the open index's entry is left unwritten); one outside it is moved by a second update. An unmet
 * condition is undefined.
 */
export async function claimJob(table: JobTableContext, claim: JobClaim): Promise<JobRecord | undefined> {
  const keep = claim.keepLeaseWithin;
  if (keep === undefined) return claimUpdate(table, claim, claimCondition);
  try {
    return await claimUpdate(table, claim, claimKeepingLease, { ':keepFrom': keep.from, ':keepTo': keep.to });
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    // Only a lease outside the range is worth a second write; anything else refuses the claim as it stands.
    // Without the old item (an emulator that does not return it, or no item), the second write decides.
    const old = error.Item;
    if (old !== undefined) {
      const lease = Number(old.leaseUntil?.N);
      const claimable = ['queued', 'processing'].includes(String(old.status?.S));
      if (!claimable || (lease >= keep.from && lease <= keep.to)) return undefined;
    }
    return claimUpdate(table, claim, claimCondition);
  }
}

/** One claim update: with `keeping` values, the lease is left as it is; without, it is set. */
async function claimUpdate(
  table: JobTableContext,
  claim: JobClaim,
  condition: string,
  keeping?: Record<string, number>,
): Promise<JobRecord | undefined> {
  try {
    const result = await table.ddb.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: jobKey(claim.jobId) },
        UpdateExpression: `SET #status = :processing, attempts = attempts + :one, leaseOwner = :owner, ${
          keeping === undefined ? 'leaseUntil = :until, ' : ''
        }#version = #version + :one, updatedAt = :at`,
        ConditionExpression: condition,
        ExpressionAttributeNames: { '#status': 'status', '#version': 'version' },
        ExpressionAttributeValues: {
          ':queued': 'queued',
          ':processing': 'processing',
          ':one': 1,
          ':owner': claim.owner,
          ...(keeping ?? { ':until': claim.leaseUntil }),
          ':at': new Date(table.now()).toISOString(),
          ':max': claim.maxAttempts,
          ':now': claim.nowMs,
        },
        ReturnValues: 'ALL_NEW',
        ...(keeping === undefined ? {} : { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const }),
      }),
    );
    return result.Attributes === undefined ? undefined : toJob(result.Attributes);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      if (keeping !== undefined) throw error;
      return undefined;
    }
    throw new JobStoreError('claim a job', error);
  }
}

/**
 * Writes `changes` to a job if nobody wrote it since `job` was read, and returns the new record: only the
 * attributes that differ are set or removed, so a lease the heartbeat renewed meanwhile stays, and an index
 * whose attributes did not change is not written. Throws JobConflictError when the version moved on.
 */
export async function updateJob(
  table: JobTableContext,
  job: JobRecord,
  changes: JobChanges,
): Promise<JobRecord> {
  const next = applyChanges(job, changes, new Date(table.now()).toISOString());
  const before = jobItem(job, table);
  const after = jobItem(next, table);
  const names: Record<string, string> = { '#version': 'version' };
  const values: Record<string, unknown> = { ':expected': job.version };
  const sets: string[] = [];
  const removes: string[] = [];
  let i = 0;
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (name === 'pk') continue;
    if (isDeepStrictEqual(after[name], before[name])) continue;
    i += 1;
    names[`#a${i}`] = name;
    if (after[name] === undefined) {
      removes.push(`#a${i}`);
    } else {
      values[`:v${i}`] = after[name];
      sets.push(`#a${i} = :v${i}`);
    }
  }
  try {
    await table.ddb.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: jobKey(job.jobId) },
        UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: versionUnchanged,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new JobConflictError(job.jobId, error);
    throw new JobStoreError('update a job', error);
  }
  return next;
}

/** Extends the lease of an open job its owner still holds, without touching its version. */
export async function renewLease(
  table: JobTableContext,
  jobId: string,
  owner: string,
  until: number,
): Promise<boolean> {
  try {
    await table.ddb.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: jobKey(jobId) },
        UpdateExpression: 'SET leaseUntil = :until',
        ConditionExpression: leaseHeldBy,
        ExpressionAttributeValues: { ':until': until, ':owner': owner },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw new JobStoreError('renew a lease', error);
  }
}
