// A realloc that cannot be met yet: where it entered the one order of waiters, and its size.
package rsmap.realloc;

/**
 * @param place where it began to wait in the one order of waiters (queued jobs too)
 * @param size  how many instances it adds: what "smallest first" compares
 * @param since the time it began to wait
 */
public record Waiting(Realloc realloc, long place, int size, long since) {
}
