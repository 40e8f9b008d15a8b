// Grant.environment: what a job sees on a host (Grid Engine's RSMAP manual, "WHAT A JOB SEES"), rendered by the grant itself.
package rsmap.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import rsmap.Fixtures;
import rsmap.ParseException;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

class GrantTest {
    private static Map<String, List<String>> maps(Object... kv) {
        Map<String, List<String>> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], List.of(((String) kv[i + 1]).split(" ")));
        }
        return m;
    }

    @Test
    void environment_table() {
        Map<String, Map<String, List<String>>> byHost = new LinkedHashMap<>();
        byHost.put("node01", maps("gpu", "0 0 0 0", "nic", "ib0"));
        byHost.put("node02", maps("gpu", "1"));
        byHost.put(Cluster.GLOBAL, maps("lic", "la", "gpu", "g0"));
        Grant g = new Grant(byHost);
        // Grid Engine's RSMAP manual: one variable per map on the host, ids separated by one space, shares repeat, plus the global maps
        assertThat(g.environment("node01")).containsExactly(Map.entry("SGE_HGR_gpu", "0 0 0 0 g0"),
                Map.entry("SGE_HGR_nic", "ib0"), Map.entry("SGE_HGR_lic", "la"));
        // another host sees its own maps and the global ones, never node01's
        assertThat(g.environment("node02")).containsExactly(Map.entry("SGE_HGR_gpu", "1 g0"), Map.entry("SGE_HGR_lic", "la"));
        // a host the grant does not name sees the job's global maps only
        assertThat(g.environment("node03")).containsExactly(Map.entry("SGE_HGR_lic", "la"), Map.entry("SGE_HGR_gpu", "g0"));
        assertThat(Grant.NONE.environment("node01")).isEmpty();
    }

    @Test
    void clusterEnvironment_isTheRunningJobsGrantRendered() throws ParseException {
        Cluster c = new Cluster(Fixtures.TABLE);
        c.configure("node01", ComplexValues.parse("gpu=4(0 0 1 1),nic=2(ib0 ib1)", Fixtures.TABLE), 0);
        c.configure("node03", ComplexValues.parse("nic=1(ib9)", Fixtures.TABLE), 0);
        c.configure(Cluster.GLOBAL, ComplexValues.parse("gpu=2(g g),lic=2(la lb)", Fixtures.TABLE), 0);
        Map<String, Integer> hosts = new LinkedHashMap<>();
        hosts.put("node01", 1);
        hosts.put("node03", 1);
        JobSpec job = new JobSpec("7", RequestList.parse("gpu=2[same=id],lic=1", Fixtures.TABLE), hosts, "node01",
                JobSpec.UNLIMITED, Optional.empty(), false);
        Grant grant = c.submit(job, 0).grant();
        for (String host : List.of("node01", "node03")) {
            assertThat(c.environment("7", host)).contains(grant.environment(host));
        }
        assertThat(c.environment("7", "node01").orElseThrow())
                .containsExactly(Map.entry("SGE_HGR_gpu", "0 0 g g"), Map.entry("SGE_HGR_lic", "la"));
        assertThat(c.environment("7", "node03").orElseThrow())
                .containsExactly(Map.entry("SGE_HGR_gpu", "g g"), Map.entry("SGE_HGR_lic", "la"));
        assertThat(c.environment("7", "node02")).isEmpty(); // not a host of the job
        assertThat(c.environment("8", "node01")).isEmpty(); // not running
    }

    @Test
    void minus_takesOneOccurrencePerIdentifier_andDropsWhatIsLeftEmpty() {
        Grant g = new Grant(Map.of("node01", maps("gpu", "0 0 1", "nic", "ib0")));
        assertThat(g.minus(new Grant(Map.of("node01", maps("gpu", "0", "nic", "ib0")))).byHost())
                .isEqualTo(Map.of("node01", Map.of("gpu", List.of("0", "1"))));
        assertThat(g.minus(g).isEmpty()).isTrue();
        assertThat(g.minus(Grant.NONE)).isEqualTo(g);
        assertThat(g.plus(new Grant(Map.of("node01", maps("gpu", "2")))).minus(new Grant(Map.of("node01",
                maps("gpu", "2"))))).isEqualTo(g);
    }
}
