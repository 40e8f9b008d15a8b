// The slots the Slurm plugin sends with JOB_START (src/main/c/slurm-slots.c): this node's CPUs of
// the job, read from the prolog's SLURM_JOB_CPUS_PER_NODE, SLURM_JOB_NODELIST and SLURMD_NODENAME.
package rsmap.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SlurmSlotsIT {
    static final Path CHECK = Path.of("target", "slurm-slots-check");

    /** SLURM_JOB_CPUS_PER_NODE | SLURM_JOB_NODELIST | SLURMD_NODENAME ("-": unset) | slots. */
    static final String[][] ROWS = {
        {"4", "n1", "n1", "4"}, // one node
        {"4(x3)", "n[1-3]", "n2", "4"}, // repeated entry
        {"2,4(x2),8", "a,n[01-03]", "a", "2"}, // plain name first
        {"2,4(x2),8", "a,n[01-03]", "n01", "4"}, // zero-padded range, inside a repetition
        {"2,4(x2),8", "a,n[01-03]", "n03", "8"}, // the last one
        {"3,5", "gpu[7,9]", "gpu9", "5"}, // a list inside the brackets
        {"3,5", "gpu[7-8],x[2]", "x2", "1"}, // more nodes than entries: Slurm did not say
        {"3,3", "n[1-2]", "zz", "3"}, // not found, all alike: the common value
        {"3,5", "n[1-2]", "zz", "1"}, // not found, unlike: Slurm did not say
        {"-", "-", "-", "1"}, // outside a prolog
        {"", "n1", "n1", "1"},
        {"x", "n1", "n1", "1"}, // unreadable
        {"4(x", "n1", "n1", "1"},
    };

    @Test
    void slots_prologVariables_thisNodesCpus() throws IOException, InterruptedException {
        assertThat(CHECK).as("built by the Maven build (src/main/c/build.sh)").isExecutable();
        Process p = new ProcessBuilder(CHECK.toAbsolutePath().toString()).redirectErrorStream(true).start();
        StringBuilder in = new StringBuilder();
        for (String[] r : ROWS) {
            in.append(r[0]).append('|').append(r[1]).append('|').append(r[2]).append('\n');
        }
        p.getOutputStream().write(in.toString().getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        List<String> out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        List<String> expected = new ArrayList<>();
        for (String[] r : ROWS) {
            expected.add(r[3]);
        }
        assertThat(out).isEqualTo(expected);
    }
}
