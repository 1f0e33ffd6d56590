/**
 * The condition expressions the job store writes with, named (as Powertools' DynamoDB persistence layer names
 * `idempotencyKeyDoesNotExist`), so the test fake evaluates the very strings the adapter sends.
 */

/** A put that creates: no item has this key yet. */
export const itemDoesNotExist = 'attribute_not_exists(pk)';
/** An update of an item that must exist. */
export const itemExists = 'attribute_exists(pk)';
/**
 * A content key that is free, or held by this delivery already (a retry of it); value `:deliveryId`. The
 * holder is `holder` (kept out of the by-delivery index), or `deliveryId` on keys written before.
 */
export const contentFreeOrOwn = `${itemDoesNotExist} OR holder = :deliveryId OR deliveryId = :deliveryId`;
/** A compare-and-swap: the version is the one read; names `#version`, value `:expected`. */
export const versionUnchanged = '#version = :expected';
/** A delivery that exists and that nobody marked enqueued yet. */
export const deliveryNotEnqueued = `${itemExists} AND attribute_not_exists(enqueuedAt)`;
/** A delivery still open whose ingest noted no failed send. */
export const deliveryClosable = 'attribute_exists(openPk) AND attribute_not_exists(sendFailedAt)';
/** An open job whose lease `:owner` holds. */
export const leaseHeldBy = 'leaseOwner = :owner AND attribute_exists(openPk)';

/** Claim part: the job waits or is being processed (`:queued`, `:processing`; name `#status`). */
export const claimableStatus = '#status IN (:queued, :processing)';
/** Claim part: attempts are left (`:max`). */
export const attemptsLeft = 'attempts < :max';
/** Claim part: nobody else holds the lease at `:now` (free, the claimant's own, or run out). */
export const leaseFreeFor =
  '(attribute_not_exists(leaseOwner) OR leaseOwner = :owner OR attribute_not_exists(leaseUntil) OR leaseUntil <= :now)';
/** The worker's one-write claim: all three parts. */
export const claimCondition = [claimableStatus, attemptsLeft, leaseFreeFor].join(' AND ');
/** The claim that keeps the job's lease: it must already run within `:keepFrom`..`:keepTo` (epoch ms). */
export const claimKeepingLease = `${claimCondition} AND leaseUntil BETWEEN :keepFrom AND :keepTo`;
