// The start and teardown of the integration tests on a real workload manager (SlurmIT, GridEngineIT): one
// cluster for all the tests of a class, closed after the last; after each test rsmapd holds nothing.
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class OneCluster<C extends RealCluster> {
    /** The class's cluster; null when it did not start. */
    protected C cluster;

    /** The cluster, started and ready for jobs. */
    protected abstract C startCluster() throws Exception;

    @BeforeAll
    protected final void start() throws Exception {
        cluster = startCluster();
    }

    @AfterAll
    protected final void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Every job's grant is given back once it ends (the epilog's JOB_END, or qdel). */
    @AfterEach
    protected final void nothingHeld() throws Exception {
        assertThat(cluster.awaitReleased(null)).as("rsmapd holds nothing after the jobs end\n%s", cluster.logs()).isEmpty();
    }
}
