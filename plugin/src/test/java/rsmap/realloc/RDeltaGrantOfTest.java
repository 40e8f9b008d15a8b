// RDelta.grantOf, the inverse of RDelta.of (the R form of a take-away or a release): it
// round-trips every grant, reads hosts by R's own nodelist, and refuses each misfit at its JSON path.
package rsmap.realloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.Fixtures;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.alloc.Grant;
import rsmap.alloc.Positions;
import rsmap.flux.R;
import rsmap.flux.RLite;
import rsmap.map.ComplexValues;

class RDeltaGrantOfTest {
    private static final long SEED = Long.getLong("rsmap.seed", 20L);
    private static final int RUNS = 400;
    private static final String[] IDS = {"0", "1", "2", "a", "b", "GPU-5f2c", "ib0"};
    private static final String[] MAPS = {"gpu", "nic"};

    /** Property: grantOf(of(g, at, hosts)) == g, through R's JSON text too, and under any re-ranking. */
    @Test
    void grantOf_rOfAnyGrant_isThatGrant() throws ParseException {
        Random rnd = new Random(SEED);
        for (int run = 0; run < RUNS; run++) {
            String context = "seed " + SEED + " run " + run;
            Cluster c = new Cluster(Fixtures.TABLE);
            int hosts = 1 + rnd.nextInt(4);
            for (int h = 0; h < hosts; h++) {
                c.configure(h == hosts - 1 && rnd.nextBoolean() ? Cluster.GLOBAL : "node" + (10 - h),
                        ComplexValues.parse(values(rnd), Fixtures.TABLE), 0);
            }
            Map<String, Map<String, List<String>>> ids = new LinkedHashMap<>();
            Map<String, Map<String, List<Integer>>> at = new LinkedHashMap<>();
            c.hosts().forEach((host, values) -> values.resourceMaps().forEach(m -> {
                List<Integer> picked = new ArrayList<>();
                for (int i = 0; i < m.amount(); i++) {
                    if (rnd.nextInt(3) == 0) {
                        picked.add(i); // ascending, as the core lists a grant's instances
                    }
                }
                if (!picked.isEmpty()) {
                    ids.computeIfAbsent(host, k -> new LinkedHashMap<>())
                            .put(m.name(), picked.stream().map(i -> m.instances().get(i).id()).toList());
                    at.computeIfAbsent(host, k -> new LinkedHashMap<>()).put(m.name(), picked);
                }
            }));
            Grant g = new Grant(ids);
            R r = RDelta.of(g, new Positions(at), List.copyOf(c.hosts().keySet()));
            assertThat(RDelta.grantOf(r, c)).as(context + ": " + r).isEqualTo(g);
            assertThat(RDelta.grantOf(R.parse(r.toString()), c)).as(context + ": through JSON").isEqualTo(g);
            long shift = rnd.nextInt(1000);
            assertThat(RDelta.grantOf(rerank(r, shift), c)).as(context + ": ranks shifted by " + shift).isEqualTo(g);
        }
    }

    /** Flux may number ranks its own way: hosts come from R's nodelist, in rank order (RFC 20). */
    @Test
    void grantOf_rankedOtherwise_readsHostsByNodelist() throws ParseException {
        Cluster c = cluster();
        R r = R.parse("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\",\"children\":{\"core\":\"\",\"gpu\":\"3\"}},"
                + "{\"rank\":\"5\",\"children\":{\"core\":\"0-3\",\"gpu\":\"0-1\"}}],\"nodelist\":[\"node02\",\"node01\"]}}");
        assertThat(RDelta.grantOf(r, c)).isEqualTo(new Grant(Map.of("node02", Map.of("gpu", List.of("d")),
                "node01", Map.of("gpu", List.of("0", "0")))));
    }

    static Stream<Arguments> refusals() {
        String ok = "\"scheduling\":{\"writer\":\"rsmapd\",\"ids\":{\"node01\":{\"gpu\":{\"2\":\"1\"}}}}";
        return Stream.of(
                // docs/realloc.md: "resolving host by nodelist ... a host not configured"
                Arguments.of(r("0", "{\"core\":\"\",\"gpu\":\"0\"}", "node09", ""),
                        "$.execution.nodelist: host node09 (rank 0) is not configured", 84),
                // "a map not on that host"
                Arguments.of(r("0", "{\"core\":\"\",\"nic\":\"0\"}", "node02", ""),
                        "$.execution.R_lite[0].children.nic: host node02 (rank 0) has no resource map nic", 71),
                // "an index out of range", also before expanding a huge idset
                Arguments.of(r("0", "{\"core\":\"\",\"gpu\":\"3-4\"}", "node01", ""),
                        "$.execution.R_lite[0].children.gpu: host node01 (rank 0) has 4 gpu instances (indices 0-3),"
                                + " not instance 4", 71),
                Arguments.of(r("0", "{\"core\":\"\",\"gpu\":\"0-4294967295\"}", "node01", ""),
                        "not instance 4294967295", 71),
                // "scheduling identifiers that disagree with the indices"
                Arguments.of(r("0", "{\"core\":\"\",\"gpu\":\"2\"}", "node01", ok.replace("\"1\"}", "\"0\"}")),
                        "$.scheduling.ids.node01.gpu[\"2\"]: node01 gpu instance 2 is 1, not 0", 192),
                // one rank per host, as rsmapd writes R
                Arguments.of(r("0-1", "{\"core\":\"\",\"gpu\":\"0\"}", "node01\",\"node01", ""),
                        "$.execution.nodelist: host node01 is named for ranks 0 and 1", 86));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("refusals")
    void grantOf_misfit_refusedAtItsPath(String text, String problem, int column) throws ParseException {
        R r = R.parse(text);
        Fixtures.assertRefused(() -> RDelta.grantOf(r, cluster()), column, problem);
    }

    @Test
    void grantOf_agreeingIdentifiers_andOnlyCores_areRead() throws ParseException {
        Cluster c = cluster();
        String ok = "\"scheduling\":{\"writer\":\"rsmapd\",\"ids\":{\"node01\":{\"gpu\":{\"2\":\"1\"}}}}";
        assertThat(RDelta.grantOf(R.parse(r("0", "{\"core\":\"\",\"gpu\":\"2\"}", "node01", ok)), c))
                .isEqualTo(new Grant(Map.of("node01", Map.of("gpu", List.of("1")))));
        assertThat(RDelta.grantOf(R.parse(r("0", "{\"core\":\"0-7\"}", "node01", "")), c)).isEqualTo(Grant.NONE);
        assertThat(RDelta.grantOf(R.empty(), c)).isEqualTo(Grant.NONE);
    }

    private static String r(String rank, String children, String nodelist, String scheduling) {
        return "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"" + rank + "\",\"children\":" + children
                + "}],\"nodelist\":[\"" + nodelist + "\"],\"starttime\":0,\"expiration\":0}"
                + (scheduling.isEmpty() ? "" : "," + scheduling) + "}";
    }

    private static Cluster cluster() throws ParseException {
        Cluster c = new Cluster(Fixtures.TABLE);
        c.configure("node01", ComplexValues.parse("gpu=4(0 0 1 1),nic=2(ib0 ib1)", Fixtures.TABLE), 0);
        c.configure("node02", ComplexValues.parse("gpu=4(a b c d)", Fixtures.TABLE), 0);
        return c;
    }

    private static R rerank(R r, long shift) {
        List<RLite> entries = new ArrayList<>();
        for (RLite e : r.rlite()) {
            entries.add(new RLite(rsmap.flux.Idset.of(e.rank().ids().map(x -> x + shift).toArray()), e.children()));
        }
        return new R(entries, r.nodelist(), 0, 0, 0, Map.of(), r.ids(), Optional.empty());
    }

    /** One or two maps of 1 to 6 instances, identifiers drawn with repeats (shares). */
    private static String values(Random rnd) {
        List<String> maps = new ArrayList<>();
        for (String m : MAPS) {
            if (maps.isEmpty() || rnd.nextBoolean()) {
                int n = 1 + rnd.nextInt(6);
                List<String> ids = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    ids.add(IDS[rnd.nextInt(IDS.length)]);
                }
                maps.add(m + "=" + n + "(" + String.join(" ", ids) + ")");
            }
        }
        return String.join(",", maps);
    }
}
