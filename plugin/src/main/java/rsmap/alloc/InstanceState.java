// What an instance of a pool is doing now: free, or held by a running job.
package rsmap.alloc;

/**
 * The state of one instance. RELEASING is where a realloc's take-away waits until the job sends RELEASE
 * for it (RFC 51, "Resource release"): still held by the job, out of its grant, not grantable to anyone.
 */
enum InstanceState {
    FREE,
    HELD,
    RELEASING
}
