// ClusterState.mapNames: the names of a host's maps in configured order, the keys of instances(host), which
// a job start reads (to split its request into this host's part and the authority's) without listing
// every instance and its holder.
package rsmap.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import rsmap.Fixtures;
import rsmap.ParseException;
import rsmap.map.ComplexValues;

class MapNamesTest {
    @Test
    void mapNames_inConfiguredOrder_andEmptyForAnUnknownHost() throws ParseException {
        Cluster c = new Cluster(Fixtures.TABLE);
        c.configure("node01", ComplexValues.parse("nic=2(ib0 ib1),gpu=4(0 0 1 1)", Fixtures.TABLE), 0);
        assertThat(c.mapNames("node01")).containsExactly("nic", "gpu");
        assertThat(c.mapNames("node09")).isEmpty();
    }

    @Test
    void mapNames_equalTheKeysOfInstances_forRandomHosts() throws ParseException {
        Random random = new Random(27);
        List<String> names = List.of("gpu", "nic", "lic");
        for (int round = 0; round < 200; round++) {
            List<String> shuffled = new ArrayList<>(names);
            Collections.shuffle(shuffled, random);
            List<String> parts = new ArrayList<>();
            for (String n : shuffled.subList(0, random.nextInt(names.size() + 1))) {
                int count = 1 + random.nextInt(5);
                StringBuilder ids = new StringBuilder();
                for (int i = 0; i < count; i++) {
                    ids.append(i == 0 ? "" : " ").append(n).append(random.nextInt(3));
                }
                parts.add(n + "=" + count + "(" + ids + ")");
            }
            Cluster c = new Cluster(Fixtures.TABLE);
            c.configure("h", ComplexValues.parse(parts.isEmpty() ? "NONE" : String.join(",", parts), Fixtures.TABLE), 0);
            assertThat(c.mapNames("h")).as("complex_values %s", parts).containsExactlyElementsOf(c.instances("h").keySet());
        }
    }
}
