// What an instance of a pool is doing now: free, or held by a running job.
package rsmap.alloc;

/**
 * The state of one instance. RELEASING is where a shrink's instances will wait until the job's processes
 * let go of them (RFC 51 semantics of a release); nothing produces it yet, and it counts as not free.
 */
enum InstanceState {
    FREE,
    HELD,
    RELEASING
}
