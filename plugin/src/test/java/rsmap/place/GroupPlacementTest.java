// Like-node groups (docs/alternatives.md, "Placement rules" 2): without group_values the group taking
// the job on the fewest hosts wins, group order only breaks ties; with group_values the listed order wins.
package rsmap.place;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.JobSpec;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.node.AttributeTypes;
import rsmap.node.Node;
import rsmap.node.NodeAttributes;
import rsmap.request.RequestList;

class GroupPlacementTest {
    /** Hosts in configured order: name, slot capacity, cpu_type. */
    private static final List<Object[]> SMALL_FIRST = List.of(
            new Object[] {"s1", 16, "small"}, new Object[] {"s2", 16, "small"}, new Object[] {"s3", 16, "small"},
            new Object[] {"s4", 16, "small"}, new Object[] {"b1", 32, "big"}, new Object[] {"b2", 32, "big"});

    record Row(String name, int slots, boolean whole, List<String> groupValues, List<String> expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    static List<Row> rows() {
        return List.of(
                // The PBS design's "smallest quantity of like nodes": two 32s, not the four 16s first in order.
                new Row("whole 64 on the two big hosts", 64, true, List.of(), List.of("b1", "b2")),
                new Row("spread 64 on the two big hosts", 64, false, List.of(), List.of("b1", "b2")),
                // Tie (one host either way): the group first in order wins.
                new Row("whole 16: tie goes to the first group", 16, true, List.of(), List.of("s1")),
                new Row("spread 32: one big host beats two small", 32, false, List.of(),
                        List.of("b1")),
                // group_values: the user's order decides, not the host count.
                new Row("group_values order wins", 64, true, List.of("small", "big"),
                        List.of("s1", "s2", "s3", "s4")),
                new Row("group_values only those values", 64, true, List.of("big"), List.of("b1", "b2")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void at_groupWithoutValues_fewestHostsWins(Row row) throws ParseException {
        ComplexTable table = ComplexTable.parse("slots s INT <= YES YES 1 1000\n");
        Cluster cluster = new Cluster(table);
        ComplexValues none = ComplexValues.parse("NONE", table, Limits.DEFAULT);
        AttributeTypes types = AttributeTypes.of(Map.of("cpu_type", "string"));
        Map<String, Node> nodes = new LinkedHashMap<>();
        for (Object[] h : SMALL_FIRST) {
            String name = (String) h[0];
            cluster.configure(name, none, 0);
            cluster.setSlots(name, OptionalInt.of((Integer) h[1]), 0);
            nodes.put(name, new Node(name, OptionalInt.of((Integer) h[1]),
                    NodeAttributes.parse(Map.of("cpu_type", (String) h[2]), types)));
        }
        Option o = new Option("", new RequestList(List.of()), Map.of(), List.of(), row.slots(), Optional.empty(),
                Optional.of("cpu_type"), row.groupValues(), row.whole());
        PlacedJob job = new PlacedJob("1", List.of(o), false, JobSpec.UNLIMITED, false);
        Fit f = Fit.at(o, job, new ClusterView(cluster, nodes, Optional.empty()), 0);
        assertThat(f.ok()).as(f.why()).isTrue();
        assertThat(f.hosts().keySet()).containsExactlyElementsOf(row.expected());
    }
}
