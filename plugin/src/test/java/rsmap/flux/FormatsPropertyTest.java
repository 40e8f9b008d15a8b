// Property tests with seeded random generators: idsets, hostlists and R round-trip through their
// canonical forms; set operations obey the set laws against a BitSet oracle (STYLE: Tests).
package rsmap.flux;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import rsmap.ParseException;

class FormatsPropertyTest {
    private static final long SEED = Long.getLong("rsmap.seed", 20261213L);
    private static final int RUNS = 1000;
    private static final String[] MAPS = {"gpu", "nic", "fpga"};

    static BitSet bits(Random rnd, int universe) {
        BitSet b = new BitSet();
        int runs = rnd.nextInt(5);
        for (int r = 0; r < runs; r++) {
            int lo = rnd.nextInt(universe);
            b.set(lo, Math.min(universe, lo + 1 + rnd.nextInt(6)));
        }
        return b;
    }

    static Idset idset(BitSet b) {
        return Idset.of(b.stream().asLongStream().toArray());
    }

    /** A non-canonical but valid spelling of {@code b}: ids, ranges split anywhere, maybe brackets. */
    static String spell(Random rnd, BitSet b) {
        List<String> parts = new ArrayList<>();
        int i = b.nextSetBit(0);
        while (i >= 0) {
            int end = i;
            while (b.get(end + 1) && rnd.nextInt(4) > 0) {
                end++;
            }
            parts.add(end == i ? Integer.toString(i) : i + "-" + end);
            i = b.nextSetBit(end + 1);
        }
        String s = String.join(",", parts);
        return rnd.nextBoolean() ? "[" + s + "]" : s;
    }

    @Test
    void idset_anySpelling_reparsesToTheSameSetAndCanonicalForm() throws ParseException {
        Random rnd = new Random(SEED);
        for (int run = 0; run < RUNS; run++) {
            BitSet b = bits(rnd, 64);
            String text = spell(rnd, b);
            Idset s = Idset.parse(text);
            assertThat(s).as("seed %d run %d: %s", SEED, run, text).isEqualTo(idset(b));
            assertThat(Idset.parse(s.toString())).isEqualTo(s);
            assertThat(s.size()).isEqualTo(b.cardinality());
        }
    }

    @Test
    void idset_setOperations_agreeWithBitSetsAndObeyTheLaws() {
        Random rnd = new Random(SEED + 1);
        for (int run = 0; run < RUNS; run++) {
            BitSet x = bits(rnd, 40);
            BitSet y = bits(rnd, 40);
            BitSet z = bits(rnd, 40);
            Idset a = idset(x);
            Idset b = idset(y);
            Idset c = idset(z);
            String as = "seed " + SEED + " run " + run + ": " + a + " / " + b + " / " + c;
            BitSet or = (BitSet) x.clone();
            or.or(y);
            BitSet and = (BitSet) x.clone();
            and.and(y);
            BitSet minus = (BitSet) x.clone();
            minus.andNot(y);
            assertThat(a.union(b)).as(as).isEqualTo(idset(or));
            assertThat(a.intersection(b)).as(as).isEqualTo(idset(and));
            assertThat(a.difference(b)).as(as).isEqualTo(idset(minus));
            assertThat(a.union(b)).as(as).isEqualTo(b.union(a));
            assertThat(a.intersection(b)).as(as).isEqualTo(b.intersection(a));
            assertThat(a.union(b.union(c))).as(as).isEqualTo(a.union(b).union(c));
            assertThat(a.intersection(b.union(c))).as(as).isEqualTo(a.intersection(b).union(a.intersection(c)));
            assertThat(a.difference(b).union(a.intersection(b))).as(as).isEqualTo(a);
            assertThat(a.difference(b).intersection(b)).as(as).isEqualTo(Idset.empty());
            assertThat(a.union(b).containsAll(a)).as(as).isTrue();
            assertThat(a.difference(a)).as(as).isEqualTo(Idset.empty());
        }
    }

    /** A random list of host names with shared prefixes, padding, repeats and suffixes. */
    static List<String> hosts(Random rnd) {
        String[] prefixes = {"node", "n", "gpu-", "", "rack1-node", "login"};
        List<String> out = new ArrayList<>();
        int n = rnd.nextInt(12);
        for (int i = 0; i < n; i++) {
            String p = prefixes[rnd.nextInt(prefixes.length)];
            int v = rnd.nextInt(120);
            String digits = switch (rnd.nextInt(4)) {
                case 0 -> String.format("%03d", v);
                case 1 -> String.format("%02d", v);
                case 2 -> "";
                default -> Integer.toString(v);
            };
            String name = p + digits + (rnd.nextInt(8) == 0 ? "-ib" : "");
            out.add(name.isEmpty() ? "x" : name);
            if (rnd.nextInt(4) == 0 && !out.isEmpty()) {
                out.add(out.get(rnd.nextInt(out.size()))); // repeats are allowed (RFC 29)
            }
        }
        return out;
    }

    @Test
    void hostlist_canonicalForm_expandsToTheSameList() throws ParseException {
        Random rnd = new Random(SEED + 2);
        for (int run = 0; run < RUNS; run++) {
            List<String> hosts = hosts(rnd);
            Hostlist h = Hostlist.of(hosts);
            String canonical = h.toString();
            assertThat(Hostlist.parse(canonical).hosts()).as("seed %d run %d: %s via %s", SEED, run, hosts, canonical)
                    .isEqualTo(hosts);
            assertThat(Hostlist.parse(String.join(",", hosts))).isEqualTo(h);
            assertThat(Hostlist.parse(canonical)).hasToString(canonical);
        }
    }

    /** Ranks 0..7 are always the hosts node00..node07, so that any two Rs agree on names. */
    static R r(Random rnd, boolean withIds) {
        Map<Long, Map<String, Idset>> byRank = new TreeMap<>();
        for (long rank = 0; rank < 8; rank++) {
            if (rnd.nextInt(3) == 0) {
                continue;
            }
            Map<String, Idset> children = new HashMap<>();
            children.put("core", idset(bits(rnd, 8)));
            for (String m : MAPS) {
                if (rnd.nextBoolean()) {
                    children.put(m, idset(bits(rnd, 8)));
                }
            }
            if (children.values().stream().allMatch(Idset::isEmpty)) {
                children.put("gpu", Idset.of(rnd.nextInt(4)));
            }
            byRank.put(rank, children);
        }
        List<RLite> entries = new ArrayList<>();
        List<String> names = new ArrayList<>();
        Map<String, Map<String, Map<Long, String>>> ids = new TreeMap<>();
        byRank.forEach((rank, children) -> {
            entries.add(new RLite(Idset.of(rank), children));
            String host = String.format("node%02d", rank);
            names.add(host);
            if (withIds) {
                children.forEach((map, set) -> {
                    if (!map.equals("core")) {
                        set.ids().filter(i -> rnd.nextBoolean()).forEach(i -> ids.computeIfAbsent(host,
                                k -> new TreeMap<>()).computeIfAbsent(map, k -> new TreeMap<>())
                                .put(i, "GPU-" + host + "-" + map + "-" + i));
                    }
                });
            }
        });
        Map<String, Idset> props = new TreeMap<>();
        if (!byRank.isEmpty() && rnd.nextBoolean()) {
            props.put("amd-mi50@gpu", Idset.of(byRank.keySet().iterator().next()));
        }
        return new R(entries, Hostlist.of(names), 0, rnd.nextBoolean() ? 0 : 1676560542, 0, props, ids,
                Optional.empty());
    }

    @Test
    void r_withInstancesAndIdentifiers_roundTripsThroughJson() throws ParseException {
        Random rnd = new Random(SEED + 3);
        for (int run = 0; run < RUNS; run++) {
            R r = r(rnd, true);
            R again = R.parse(r.toString());
            assertThat(again).as("seed %d run %d: %s", SEED, run, r).isEqualTo(r);
            assertThat(again).hasToString(r.toString());
        }
    }

    @Test
    void r_setOperations_obeyTheLawsRankByRank() {
        Random rnd = new Random(SEED + 4);
        for (int run = 0; run < RUNS; run++) {
            R a = r(rnd, true);
            R b = r(rnd, false);
            String as = "seed " + SEED + " run " + run + ": " + a + " / " + b;
            R union = a.union(b);
            // properties of a union come from both sides, so the laws through a union compare resources
            assertThat(strip(union.difference(b))).as(as).isEqualTo(strip(a.difference(b)));
            assertThat(a.difference(b).union(a.intersection(b))).as(as).isEqualTo(keepTimes(a));
            assertThat(a.intersection(b).difference(b).isEmpty()).as(as).isTrue();
            assertThat(strip(union.intersection(a))).as(as).isEqualTo(strip(a));
            assertThat(a.union(R.empty())).as(as).isEqualTo(keepTimes(a));
            assertThat(strip(a.union(b))).as(as).isEqualTo(strip(b.union(a)));
            for (Map.Entry<Long, Map<String, Idset>> e : union.byRank().entrySet()) {
                for (Map.Entry<String, Idset> child : e.getValue().entrySet()) {
                    Idset mine = a.byRank().getOrDefault(e.getKey(), Map.of()).getOrDefault(child.getKey(), Idset.empty());
                    Idset theirs = b.byRank().getOrDefault(e.getKey(), Map.of()).getOrDefault(child.getKey(),
                            Idset.empty());
                    assertThat(child.getValue()).as(as).isEqualTo(mine.union(theirs));
                }
            }
        }
    }

    /** a as a set operation returns it: nslots unset (the rest is kept). */
    private static R keepTimes(R a) {
        return new R(a.rlite(), a.nodelist(), 0, a.starttime(), a.expiration(), a.properties(), a.ids(),
                a.scheduling());
    }

    /** The resources and identifiers only, for comparing results whose times or properties differ. */
    private static R strip(R a) {
        return new R(a.rlite(), a.nodelist(), 0, 0, 0, Map.of(), a.ids(), Optional.empty());
    }
}
