// The Slurm integration tests' cluster: one real Slurm cluster for all the tests of a class (OneCluster), the
// tests in their @Order, each within 180 s.
package rsmap.slurm;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import rsmap.daemon.OneCluster;

@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
abstract class OneSlurmCluster extends OneCluster<SlurmCluster> {
    /** Whether rsmapd builds {@code gpu} from the stand-in NVML ({@link SlurmCluster#start(boolean)}). */
    boolean discovered() {
        return false;
    }

    @Override
    protected SlurmCluster startCluster() throws Exception {
        return SlurmCluster.start(discovered());
    }
}
