// Instances that exclude each other (a whole card and its MIG slices, overlapping slices): never held at
// once, never picked together, explained; blocked ones are never granted.
package rsmap.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.Fixtures;
import rsmap.ParseException;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;
import org.junit.jupiter.api.Test;

class ExclusionsTest {
    private static final String HOST = "node00";

    private static Exclusions.Key k(String map, String id) {
        return new Exclusions.Key(map, id);
    }

    /** Card 0 as gpu 0; its slices as nic a b c (a and b overlap; all three are on the card). */
    private static Cluster cluster(Map<Exclusions.Key, String> blocked) throws ParseException {
        Cluster c = new Cluster(Fixtures.TABLE);
        c.setExclusionRule((host, values) -> Exclusions.of(List.of(Map.entry(k("gpu", "0"), k("nic", "a")),
                Map.entry(k("gpu", "0"), k("nic", "b")), Map.entry(k("gpu", "0"), k("nic", "c")),
                Map.entry(k("nic", "a"), k("nic", "b"))), blocked));
        c.configure(HOST, ComplexValues.parse("gpu=1(0),nic=3(a b c)", Fixtures.TABLE), 0);
        return c;
    }

    private static Decision start(Cluster c, String id, String request) throws ParseException {
        return c.grantNow(new JobSpec(id, RequestList.parse(request, Fixtures.TABLE), Map.of(HOST, 1), HOST,
                JobSpec.UNLIMITED, Optional.empty(), false), 0);
    }

    private static List<String> ids(Cluster c, String job) {
        return c.instancesOf(job).stream().map(rsmap.map.Instance::id).toList();
    }

    @Test
    void grantNow_sliceHeld_wholeCardWaitsUntilTheLastSliceEnds() throws Exception {
        Cluster c = cluster(Map.of());
        assertThat(start(c, "1", "nic=1").result() == Decision.Result.GRANTED).isTrue();
        assertThat(start(c, "2", "nic=1").result() == Decision.Result.GRANTED).isTrue();
        assertThat(ids(c, "1")).isNotEmpty();
        assertThat(List.of(ids(c, "1").get(0), ids(c, "2").get(0))).as("a and b overlap: never both")
                .isNotEqualTo(List.of("a", "b")).isNotEqualTo(List.of("b", "a"));
        assertThat(start(c, "3", "gpu=1").result() == Decision.Result.GRANTED).isFalse();
        assertThat(c.explain(RequestList.parse("gpu=1", Fixtures.TABLE), HOST).toHuman()).contains("excluded by nic");
        c.finish("1", 0);
        assertThat(start(c, "3", "gpu=1").result() == Decision.Result.GRANTED).isFalse();
        c.finish("2", 0);
        assertThat(start(c, "3", "gpu=1").result() == Decision.Result.GRANTED).isTrue();
        assertThat(start(c, "4", "nic=1").result() == Decision.Result.GRANTED).as("the whole card is held").isFalse();
    }

    @Test
    void grantNow_twoInOneRequest_neverOverlappingPartners() throws Exception {
        Cluster c = cluster(Map.of());
        assertThat(start(c, "1", "nic=2").result() == Decision.Result.GRANTED).isTrue();
        assertThat(ids(c, "1")).doesNotContainSequence("a", "b");
        assertThat(start(c, "2", "nic=3").result() == Decision.Result.GRANTED).as("a and b cannot be held together").isFalse();
    }

    @Test
    void grantNow_blocked_neverGrantedAndExplained() throws Exception {
        Cluster c = cluster(Map.of(k("nic", "c"), "an admin's static slice"));
        assertThat(start(c, "1", "nic=1[id=c]").result() == Decision.Result.GRANTED).isFalse();
        assertThat(c.explain(RequestList.parse("nic=1[id=c]", Fixtures.TABLE), HOST).toHuman())
                .contains("an admin's static slice");
    }

    @Test
    void blocked_aHeldSliceATaintedCardAndABlock_eachNamedByWhat_heldAndUnexcludedLeftOut() throws Exception {
        Cluster c = cluster(Map.of(k("nic", "c"), "an admin's static slice"));
        assertThat(c.blocked(HOST, "gpu")).isEmpty();
        assertThat(start(c, "1", "nic=1[id=a]").result()).isEqualTo(Decision.Result.GRANTED);
        assertThat(c.blocked(HOST, "gpu")).containsExactly(Map.entry("0",
                new Exclusions.Block("excluded by nic a held by job 1", k("nic", "a"), "1", null)));
        assertThat(c.blocked(HOST, "nic")).as("a is held; c is blocked outright, b overlaps a").containsOnlyKeys("b", "c")
                .containsEntry("b", new Exclusions.Block("excluded by nic a held by job 1", k("nic", "a"), "1", null))
                .containsEntry("c", new Exclusions.Block("an admin's static slice", null, null, null));
        c.finish("1", 0);
        c.taint(HOST, "gpu", "0", "mig: no slice at 12:03:05", 0);
        assertThat(c.blocked(HOST, "nic").get("a")).isEqualTo(new Exclusions.Block(
                "excluded by gpu 0, tainted: mig: no slice at 12:03:05", k("gpu", "0"), null, "mig: no slice at 12:03:05"));
        assertThat(c.blocked(HOST, "gpu")).as("tainted itself").isEmpty();
        c.taint(HOST, "nic", "a", "admin: fan at 12:03:05", 0);
        assertThat(c.blocked(HOST, "nic")).as("a tainted itself: its taint says why, not its partner's")
                .containsOnlyKeys("b", "c");
        assertThat(c.blocked(HOST, "disk")).isEmpty();
    }

    @Test
    void grantNow_cardAndItsSliceInOneJob_neverBoth() throws Exception {
        Cluster c = cluster(Map.of());
        assertThat(start(c, "1", "gpu=1,nic=1").result()).as("every nic is a slice of card 0").isNotEqualTo(
                Decision.Result.GRANTED);
    }

    /**
     * docs/gpus.md, docs/health.md: a tainted card (drained, sick) is granted to no new job, its slices
     * neither; a drained slice takes out its card and the slices overlapping it, not the others. Untainted,
     * all are granted again.
     */
    @Test
    void grantNow_taintedPartner_excludesAsAHeldOneWould_andExplainsWhy() throws Exception {
        Cluster c = cluster(Map.of());
        c.taint(HOST, "gpu", "0", "drained: fan", 0);
        for (String slice : List.of("a", "b", "c")) {
            assertThat(start(c, "1", "nic=1[id=" + slice + "]").result()).as(slice).isNotEqualTo(Decision.Result.GRANTED);
        }
        assertThat(c.explain(RequestList.parse("nic=1", Fixtures.TABLE), HOST).toHuman())
                .contains("excluded by gpu 0, tainted: drained: fan");
        c.untaint(HOST, "gpu", "0", 0);
        c.taint(HOST, "nic", "a", "Xid 79", 0);
        assertThat(start(c, "2", "gpu=1").result()).as("the card of a sick slice").isNotEqualTo(Decision.Result.GRANTED);
        assertThat(start(c, "3", "nic=1[id=b]").result()).as("overlaps a").isNotEqualTo(Decision.Result.GRANTED);
        assertThat(start(c, "4", "nic=1[id=c]").result()).as("apart from a").isEqualTo(Decision.Result.GRANTED);
        c.finish("4", 0);
        c.untaint(HOST, "nic", "a", 0);
        assertThat(start(c, "5", "gpu=1").result()).isEqualTo(Decision.Result.GRANTED);
    }
}
